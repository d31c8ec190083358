//! The async [`Client`] behind the synchronous [`Extensions`] trait the engine calls:
//! each call runs on a tokio runtime (a dedicated one owned here, or one the caller
//! hands over) while the calling thread waits for its answer. The engine runs on
//! ordinary threads (the CLI's main thread, the render service's blocking pool), so
//! waiting there blocks no async worker. A caller that renders on a worker of a
//! multi-thread runtime (the applier's reconcile with the engine in process) gets its
//! wait wrapped in `tokio::task::block_in_place`, so the worker's other tasks move to
//! another thread while it waits; on a current-thread runtime that is impossible, and
//! the wait is bounded by the handler's timeout only.

use std::future::Future;
use std::sync::Arc;
use std::sync::mpsc;

use tokio::runtime::{Handle, Runtime};

use crate::client::Client;
use crate::error::{Error, ErrorKind};
use crate::extensions::Extensions;
use crate::hooks::{
    DiscoverVariablesRequest, DiscoverVariablesResponse, GeneratePatchesRequest,
    GeneratePatchesResponse, GenerateUpgradePlanRequest, GenerateUpgradePlanResponse,
    ValidateTopologyRequest, ValidateTopologyResponse,
};

/// A [`Client`] callable from synchronous code.
pub struct BlockingClient {
    client: Arc<Client>,
    handle: Handle,
    // Kept so the runtime lives as long as the client; shut down without waiting.
    runtime: Option<Runtime>,
}

impl BlockingClient {
    /// Runs calls on a runtime of its own (one worker thread).
    pub fn new(client: Arc<Client>) -> Result<Self, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("runtime-sdk")
            .enable_all()
            .build()
            .map_err(|e| {
                Error::new(
                    ErrorKind::Misconfigured,
                    format!("failed to start the Runtime SDK client: {e}"),
                )
            })?;
        Ok(BlockingClient {
            client,
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
        })
    }

    /// Runs calls on the runtime behind `handle`. The caller must not be the thread of a
    /// current-thread runtime behind `handle` (it would wait for itself); a worker of a
    /// multi-thread runtime may call, its wait goes through `block_in_place`.
    pub fn on(client: Arc<Client>, handle: Handle) -> Self {
        BlockingClient {
            client,
            handle,
            runtime: None,
        }
    }

    /// The client.
    pub fn client(&self) -> &Arc<Client> {
        &self.client
    }

    /// Runs `future` on the runtime and waits for its output.
    pub fn block_on<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, Error> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = tx.send(future.await);
        });
        let on_multi_thread_worker = Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        // block_in_place panics on a current-thread runtime; on a multi-thread one it
        // hands the worker's queue to another thread (and does nothing special on a
        // blocking-pool thread).
        let answer = if on_multi_thread_worker {
            tokio::task::block_in_place(|| rx.recv())
        } else {
            rx.recv()
        };
        answer.map_err(|_| {
            Error::new(
                ErrorKind::Call,
                "the Runtime SDK client stopped before answering",
            )
        })
    }

    fn call<R: crate::hooks::HookRequest>(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &R,
    ) -> Result<R::Response, Error> {
        let client = self.client.clone();
        let (handler, namespace, name, request) = (
            handler.to_string(),
            namespace.to_string(),
            name.to_string(),
            request.clone(),
        );
        self.block_on(async move {
            client
                .call_extension(&namespace, &name, &handler, &request)
                .await
        })?
    }
}

impl Drop for BlockingClient {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Dropping a runtime inside another runtime's context panics; this does not.
            runtime.shutdown_background();
        }
    }
}

impl Extensions for BlockingClient {
    fn generate_patches(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &GeneratePatchesRequest,
    ) -> Result<GeneratePatchesResponse, Error> {
        self.call(handler, namespace, name, request)
    }

    fn validate_topology(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &ValidateTopologyRequest,
    ) -> Result<ValidateTopologyResponse, Error> {
        self.call(handler, namespace, name, request)
    }

    fn discover_variables(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &DiscoverVariablesRequest,
    ) -> Result<DiscoverVariablesResponse, Error> {
        self.call(handler, namespace, name, request)
    }

    fn generate_upgrade_plan(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &GenerateUpgradePlanRequest,
    ) -> Result<GenerateUpgradePlanResponse, Error> {
        self.call(handler, namespace, name, request)
    }
}
