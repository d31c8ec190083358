//! gRPC contracts of the topograph services, generated from `proto/` at build time, and
//! what their clients and servers share: the channels that balance calls over a
//! service's instances ([`balance`]), the render service as an engine ([`remote`]),
//! the typed desired state ([`desired`]) and refusals as field violations
//! ([`violations`]).

pub mod balance;
pub mod desired;
pub mod remote;
pub mod violations;

/// `topograph.render.v1`: the render service.
pub mod render {
    /// Version 1.
    pub mod v1 {
        #![allow(missing_docs, clippy::all, clippy::pedantic)]
        tonic::include_proto!("topograph.render.v1");

        /// The encoded file descriptor set of the render contract, for server reflection.
        pub const FILE_DESCRIPTOR_SET: &[u8] =
            include_bytes!(concat!(env!("OUT_DIR"), "/render_descriptor.bin"));
    }
}

/// `topograph.gateway.v1`: the gateway (the platform API).
pub mod gateway {
    /// Version 1.
    pub mod v1 {
        #![allow(missing_docs, clippy::all, clippy::pedantic)]
        tonic::include_proto!("topograph.gateway.v1");

        /// The encoded file descriptor set of the gateway contract, for server reflection.
        pub const FILE_DESCRIPTOR_SET: &[u8] =
            include_bytes!(concat!(env!("OUT_DIR"), "/gateway_descriptor.bin"));
    }
}
