//! The frame of every service binary around its work: a multi-threaded runtime, the
//! tracing subscriber (see [`crate::trace`]), the last spans flushed at the end, and the
//! exit code: 0 when the work ends well, 2 (after the error on stderr) when it fails or
//! the runtime cannot start.
//!
//! Stopping is left to the work: each service stops differently (the render service
//! reports NOT_SERVING first, the applier drains its reconciles) and starts watching for
//! [`crate::rpc::shutdown_signal`] only when it can stop gracefully, so a signal during
//! start-up still ends the process at once.

use std::fmt::Display;
use std::future::Future;
use std::process::ExitCode;

/// Runs `work` for the binary `service` (also the traces' service name by default) and
/// maps its outcome to the exit code.
pub fn run<E: Display>(service: &str, work: impl Future<Output = Result<(), E>>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("{service}: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    // Inside the runtime: the span exporter's connection lives there.
    let tracing = {
        let _runtime = runtime.enter();
        crate::trace::init(service)
    };
    let result = runtime.block_on(work);
    // Flushes the last spans (a service's final requests or reconciles) while the
    // runtime still runs.
    tracing.shutdown();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{service}: {e}");
            ExitCode::from(2)
        }
    }
}
