//! Compiles `proto/shogi/v1/*.proto` with protox (a pure-Rust protobuf compiler, so no system
//! `protoc` is needed) and generates the prost messages and tonic client and server from the
//! resulting descriptors. The encoded descriptor set is written next to the generated code for
//! gRPC server reflection.

use prost::Message;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let proto_root = manifest.join("../../proto");
    let files = [
        "shogi/v1/arbiter.proto",
        "shogi/v1/bus.proto",
        "shogi/v1/operator.proto",
    ];
    for file in files {
        println!("cargo:rerun-if-changed={}", proto_root.join(file).display());
    }

    // Source info keeps the .proto comments, which prost turns into doc comments.
    let fds = protox::Compiler::new([&proto_root])?
        .include_source_info(true)
        .include_imports(true)
        .open_files(files)?
        .file_descriptor_set();

    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out_dir.join("shogi_v1_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // prost's codec, but INVALID_ARGUMENT for a request that cannot be decoded (codec.rs).
        .codec_path("crate::codec::Codec")
        .compile_fds(fds)?;
    Ok(())
}
