//! The queue's command-line flags, flattened into every binary that reaches the queue
//! (the applier, the gateway), so they share one set of names and environment
//! variables: `--redis` (`TOPOGRAPH_REDIS`), `--redis-prefix` (`TOPOGRAPH_REDIS_PREFIX`)
//! `--redis-shards` (`TOPOGRAPH_REDIS_SHARDS`) and `--redis-shard-by`
//! (`TOPOGRAPH_REDIS_SHARD_BY`).
//!
//! Names a binary used before stay readable for a while ([`Renamed`], [`parse`]): the
//! old variable counts only while the new one is unset, and its use is reported so the
//! caller can log a deprecation warning once its logging is up.

use std::ffi::{OsStr, OsString};

use clap::{Command, Parser};

use crate::{MemoryQueue, QueueConfig, QueueError, RedisQueue, ShardBy};

/// The `--redis` value for a queue in this process only.
pub const MEMORY: &str = "memory";

/// Where the queue is.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct QueueArgs {
    /// The queue's Redis (`redis://host:port`; comma-separated node URLs for a Redis
    /// Cluster), or `memory` for a queue in this process only (one applier, or tests).
    #[arg(long, env = "TOPOGRAPH_REDIS")]
    pub redis: String,
    /// Key prefix in Redis: the same in every process sharing the queue.
    #[arg(long, env = "TOPOGRAPH_REDIS_PREFIX", default_value = "topograph")]
    pub redis_prefix: String,
    /// Streams the queue spreads over: the same in every process sharing the prefix (a
    /// Redis Cluster wants a few per primary node).
    #[arg(long, env = "TOPOGRAPH_REDIS_SHARDS", default_value_t = 4)]
    pub redis_shards: usize,
    /// What picks a key's shard: `cluster` (the Cluster's key: spreads evenly) or
    /// `management-cluster` (its management cluster's name: one management cluster's
    /// Clusters wait in one shard, so appliers with owned-object caches take the
    /// Clusters of the management clusters they watch first; give each management
    /// cluster a shard of its own, e.g. 16 shards for ten). The same in every process
    /// sharing the prefix, like the shard count.
    #[arg(long, env = "TOPOGRAPH_REDIS_SHARD_BY", value_enum, default_value_t = ShardBy::Cluster)]
    pub redis_shard_by: ShardBy,
}

/// A connected queue: the caller picks what goes with each kind (the applier's
/// leases), and [`crate::Queue`] is generic, so this is an enum rather than a trait
/// object.
#[derive(Debug)]
pub enum Connected {
    /// `--redis memory`.
    Memory(MemoryQueue),
    /// A Redis server or Redis Cluster.
    Redis(RedisQueue),
}

impl QueueArgs {
    /// Connects the queue these flags name.
    pub async fn connect(&self, config: QueueConfig) -> Result<Connected, QueueError> {
        if self.redis == MEMORY {
            return Ok(Connected::Memory(MemoryQueue::new(config)));
        }
        let queue = RedisQueue::connect(&self.redis, &self.redis_prefix, self.redis_shards, config)
            .await?
            .with_shard_by(self.redis_shard_by);
        queue.claim_layout().await?;
        Ok(Connected::Redis(queue))
    }
}

/// An environment variable under its former name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Renamed {
    /// The deprecated name, read while `new` is unset.
    pub old: &'static str,
    /// The name an argument of the command reads.
    pub new: &'static str,
}

/// The gateway's names for the queue's variables before they were shared with the
/// applier.
pub const GATEWAY_RENAMED: &[Renamed] = &[
    Renamed {
        old: "TOPOGRAPH_GATEWAY_REDIS",
        new: "TOPOGRAPH_REDIS",
    },
    Renamed {
        old: "TOPOGRAPH_GATEWAY_REDIS_PREFIX",
        new: "TOPOGRAPH_REDIS_PREFIX",
    },
    Renamed {
        old: "TOPOGRAPH_GATEWAY_REDIS_SHARDS",
        new: "TOPOGRAPH_REDIS_SHARDS",
    },
];

/// Points the arguments of `command` that read a `new` name at the `old` one instead
/// where `env` has the old name and not the new one; returns the command and one
/// warning per old name in use.
///
/// Rewriting the argument's variable, rather than filling the value in afterwards,
/// keeps clap's own handling: a required flag is satisfied, the value is checked like
/// any other, and a flag on the command line still wins. clap reads the variable when
/// the argument is changed here, from the process environment; `env` only decides which
/// name applies (tests pass their own).
pub fn with_renamed_env(
    mut command: Command,
    renamed: &[Renamed],
    env: impl Fn(&str) -> Option<OsString>,
) -> (Command, Vec<String>) {
    let mut warnings = Vec::new();
    for name in renamed {
        if env(name.new).is_some() || env(name.old).is_none() {
            continue;
        }
        let id = command
            .get_arguments()
            .find(|arg| arg.get_env() == Some(OsStr::new(name.new)))
            .map(|arg| arg.get_id().clone());
        if let Some(id) = id {
            command = command.mut_arg(id, |arg| arg.env(name.old));
            warnings.push(format!(
                "{} is deprecated and will stop working: set {} instead",
                name.old, name.new
            ));
        }
    }
    (command, warnings)
}

/// [`Parser::parse`] that also reads the `renamed` variables' old names (see
/// [`with_renamed_env`]): the arguments, and the deprecation warnings to log. Exits
/// with clap's message on a bad command line, as `parse` does.
pub fn parse<T: Parser>(renamed: &[Renamed]) -> (T, Vec<String>) {
    let (mut command, warnings) =
        with_renamed_env(T::command(), renamed, |name| std::env::var_os(name));
    let matches = command.get_matches_mut();
    match T::from_arg_matches(&matches) {
        Ok(args) => (args, warnings),
        Err(e) => e.format(&mut command).exit(),
    }
}
