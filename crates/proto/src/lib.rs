//! gRPC contracts of the topograph services, generated from `proto/` at build time, and
//! the client channels that balance calls over a service's instances ([`balance`]).

pub mod balance;

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
