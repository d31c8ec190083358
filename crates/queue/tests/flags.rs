//! The queue's flags: the gateway's former environment names still work while the new
//! ones are unset, and a flag on the command line wins over either.
//!
//! Environment variables are global to the process: each test sets a variable of its
//! own, no test's outcome depends on another's, and "is the new name set" is decided
//! through `with_renamed_env`'s lookup rather than by setting or clearing the new names
//! every test shares.

use std::ffi::OsString;

use clap::{CommandFactory, FromArgMatches, Parser};
use topograph_queue::flags::{GATEWAY_RENAMED, QueueArgs, Renamed, with_renamed_env};

#[derive(Parser, Debug)]
struct Cli {
    #[command(flatten)]
    queue: QueueArgs,
}

/// The process environment for old names; the new names unset.
fn old_names_only(name: &str) -> Option<OsString> {
    if GATEWAY_RENAMED.iter().any(|renamed| renamed.new == name) {
        None
    } else {
        std::env::var_os(name)
    }
}

/// Sets `name` for this test alone.
fn set(name: &str, value: &str) {
    // SAFETY: only this file's tests run in this process, each sets a different
    // variable, and everything that reads the environment here goes through std, which
    // serialises access.
    unsafe { std::env::set_var(name, value) };
}

fn parse(args: &[&str]) -> Result<(Cli, Vec<String>), clap::Error> {
    let (mut command, warnings) = with_renamed_env(Cli::command(), GATEWAY_RENAMED, old_names_only);
    let matches =
        command.try_get_matches_from_mut(std::iter::once("test").chain(args.iter().copied()))?;
    Ok((Cli::from_arg_matches(&matches)?, warnings))
}

#[test]
fn the_old_gateway_redis_variable_is_read_when_the_new_one_is_unset() {
    set("TOPOGRAPH_GATEWAY_REDIS", "redis://old:6379");
    let (cli, warnings) = parse(&[]).expect("--redis from TOPOGRAPH_GATEWAY_REDIS");
    assert_eq!(cli.queue.redis, "redis://old:6379");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("TOPOGRAPH_GATEWAY_REDIS ") && w.contains("TOPOGRAPH_REDIS")),
        "{warnings:?}"
    );
    let (cli, _) = parse(&["--redis", "redis://flag:6379"]).expect("--redis given");
    assert_eq!(cli.queue.redis, "redis://flag:6379", "the flag wins");
}

#[test]
fn the_old_gateway_prefix_variable_is_read_when_the_new_one_is_unset() {
    set("TOPOGRAPH_GATEWAY_REDIS_PREFIX", "old-prefix");
    let (cli, warnings) = parse(&["--redis", "memory"]).expect("parsed");
    assert_eq!(cli.queue.redis_prefix, "old-prefix");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("TOPOGRAPH_GATEWAY_REDIS_PREFIX")),
        "{warnings:?}"
    );
}

#[test]
fn the_old_gateway_shards_variable_is_read_and_checked_like_the_flag() {
    set("TOPOGRAPH_GATEWAY_REDIS_SHARDS", "7");
    let (cli, warnings) = parse(&["--redis", "memory"]).expect("parsed");
    assert_eq!(cli.queue.redis_shards, 7);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("TOPOGRAPH_GATEWAY_REDIS_SHARDS")),
        "{warnings:?}"
    );
    let (cli, _) = parse(&["--redis", "memory", "--redis-shards", "9"]).expect("parsed");
    assert_eq!(cli.queue.redis_shards, 9, "the flag wins");
}

#[test]
fn a_bad_value_under_an_old_name_is_refused_like_the_flag() {
    // A variable of this test's own, not one of the gateway's.
    let renamed = [Renamed {
        old: "TOPOGRAPH_TEST_FORMER_SHARDS",
        new: "TOPOGRAPH_REDIS_SHARDS",
    }];
    set("TOPOGRAPH_TEST_FORMER_SHARDS", "many");
    let (mut command, warnings) = with_renamed_env(Cli::command(), &renamed, |name| {
        (name == "TOPOGRAPH_TEST_FORMER_SHARDS").then(|| OsString::from("many"))
    });
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let refused = command.try_get_matches_from_mut(["test", "--redis", "memory"]);
    assert!(refused.is_err(), "{refused:?}");
}

#[test]
fn the_new_names_win_over_the_old_ones() {
    let (command, warnings) = with_renamed_env(Cli::command(), GATEWAY_RENAMED, |_| {
        Some(OsString::from("set"))
    });
    assert!(warnings.is_empty(), "{warnings:?}");
    let env: Vec<_> = command
        .get_arguments()
        .filter_map(|arg| arg.get_env())
        .map(|name| name.to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        env,
        [
            "TOPOGRAPH_REDIS",
            "TOPOGRAPH_REDIS_PREFIX",
            "TOPOGRAPH_REDIS_SHARDS",
            "TOPOGRAPH_REDIS_SHARD_BY"
        ]
    );
}

#[test]
fn shards_are_hashed_by_cluster_unless_told_by_management_cluster() {
    use topograph_queue::ShardBy;
    let (cli, _) = parse(&["--redis", "memory"]).expect("defaults");
    assert_eq!(cli.queue.redis_shard_by, ShardBy::Cluster);
    let (cli, _) = parse(&[
        "--redis",
        "memory",
        "--redis-shard-by",
        "management-cluster",
    ])
    .expect("--redis-shard-by management-cluster");
    assert_eq!(cli.queue.redis_shard_by, ShardBy::ManagementCluster);
    let refused = parse(&["--redis", "memory", "--redis-shard-by", "namespace"]);
    assert!(refused.is_err(), "{refused:?}");
}
