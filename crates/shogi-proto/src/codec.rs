//! The codec of the `shogi.v1` services (tonic-prost-build's `codec_path`): prost's encoder
//! and decoder, except for what a request that cannot be decoded is answered with.
//!
//! tonic's prost codec answers bytes that are not the method's request message `INTERNAL`, as
//! if the server had failed. Here they are the client's error: `INVALID_ARGUMENT`, with a
//! `google.rpc.BadRequest` naming the field prost could not read (`start.sfen`, from the
//! decoder's own path) when it knows it. The same codec decodes answers in the generated
//! clients, where an undecodable answer is the server's fault and stays `INTERNAL`: a request
//! is told from an answer by its message name, which ends in `Request` for every method (buf's
//! `RPC_REQUEST_STANDARD_NAME`, checked by `make lint-proto`).

use std::marker::PhantomData;
use tonic::Status;
use tonic::codec::{BufferSettings, DecodeBuf};
use tonic_prost::ProstEncoder;

/// prost's codec with [`undecodable`] for what cannot be decoded.
#[derive(Debug, Clone)]
pub struct Codec<T, U> {
    _types: PhantomData<(T, U)>,
}

impl<T, U> Default for Codec<T, U> {
    fn default() -> Self {
        Codec {
            _types: PhantomData,
        }
    }
}

impl<T, U> tonic::codec::Codec for Codec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = Decoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        Decoder { _type: PhantomData }
    }
}

/// Decodes `U`, answering what is not a `U` with [`undecodable`].
#[derive(Debug, Clone)]
pub struct Decoder<U> {
    _type: PhantomData<U>,
}

impl<U: prost::Message + Default> tonic::codec::Decoder for Decoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        U::decode(buf)
            .map(Some)
            .map_err(|e| undecodable(message_name::<U>(), &e))
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

/// The protobuf message name of `U` (`SubmitMoveRequest`).
fn message_name<U>() -> &'static str {
    let full = std::any::type_name::<U>();
    full.rsplit("::").next().unwrap_or(full)
}

/// The status for bytes that are not a `message`: `INVALID_ARGUMENT` with a `BadRequest` field
/// violation when `message` is a request (the field's path when prost names it, the whole
/// request otherwise); `INTERNAL` when it is an answer.
pub fn undecodable(message: &str, error: &prost::DecodeError) -> Status {
    let (path, description) = field_path(&error.to_string());
    if !message.ends_with("Request") {
        return Status::internal(format!("the answer is not a {message} message: {error}"));
    }
    let field = if path.is_empty() {
        "(request)".to_owned()
    } else {
        path
    };
    let text = format!("the request is not a {message} message: {field}: {description}");
    <Status as tonic_types::StatusExt>::with_error_details(
        tonic::Code::InvalidArgument,
        text,
        tonic_types::ErrorDetails::with_bad_request_violation(field, description),
    )
}

/// The field path and the description in prost's error text, `failed to decode Protobuf
/// message: Inner.field: Outer.inner: description` (innermost first), as `inner.field`.
fn field_path(text: &str) -> (String, String) {
    let mut rest = text
        .strip_prefix("failed to decode Protobuf message: ")
        .unwrap_or(text);
    let mut fields = Vec::new();
    while let Some((segment, after)) = rest.split_once(": ") {
        let Some((message, field)) = segment.split_once('.') else {
            break;
        };
        let ident =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !(ident(message) && ident(field)) {
            break;
        }
        // prost names a oneof by the oneof's name, which is no field: the path stops at the
        // message holding it (`start`, not `start.start`).
        if !oneofs().contains(&(message.to_owned(), field.to_owned())) {
            fields.push(field);
        }
        rest = after;
    }
    fields.reverse();
    (fields.join("."), rest.to_owned())
}

/// (message name, oneof name) of every oneof in `shogi.v1`, from the descriptor set.
fn oneofs() -> &'static std::collections::HashSet<(String, String)> {
    static ONEOFS: std::sync::OnceLock<std::collections::HashSet<(String, String)>> =
        std::sync::OnceLock::new();
    ONEOFS.get_or_init(|| {
        let mut out = std::collections::HashSet::new();
        let Ok(set) =
            <prost_types::FileDescriptorSet as prost::Message>::decode(crate::FILE_DESCRIPTOR_SET)
        else {
            return out;
        };
        fn walk(
            messages: &[prost_types::DescriptorProto],
            out: &mut std::collections::HashSet<(String, String)>,
        ) {
            for m in messages {
                for o in &m.oneof_decl {
                    out.insert((m.name().to_owned(), o.name().to_owned()));
                }
                walk(&m.nested_type, out);
            }
        }
        for file in &set.file {
            walk(&file.message_type, &mut out);
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1;
    use prost::Message as _;
    use tonic_types::StatusExt as _;

    fn decode<U: prost::Message + Default>(bytes: &[u8]) -> Status {
        U::decode(bytes)
            .map(|_| ())
            .map_err(|e| undecodable(message_name::<U>(), &e))
            .expect_err("undecodable")
    }

    fn violation(status: &Status) -> (String, String) {
        let details = status.get_error_details();
        let bad = details.bad_request().expect("a BadRequest");
        let v = &bad.field_violations[0];
        (v.field.clone(), v.description.clone())
    }

    #[test]
    fn a_request_field_that_is_not_utf8_is_invalid_argument_naming_it() {
        // usi (field 3), two bytes that are not UTF-8.
        let status = decode::<v1::SubmitMoveRequest>(&[0x1a, 2, 0xff, 0xfe]);
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        let (field, description) = violation(&status);
        assert_eq!(field, "usi");
        assert!(description.contains("UTF-8"), "{description}");
        assert!(
            status.message().contains("SubmitMoveRequest"),
            "{}",
            status.message()
        );
    }

    #[test]
    fn a_nested_field_is_named_by_its_path() {
        // start (field 2) holding sfen (field 2) that is not UTF-8.
        let inner = [0x12, 1, 0xff];
        let mut bytes = vec![0x12, inner.len() as u8];
        bytes.extend_from_slice(&inner);
        let status = decode::<v1::CreateGameRequest>(&bytes);
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        // sfen is a member of the oneof `start`, which prost names instead of the member.
        assert_eq!(violation(&status).0, "start");
    }

    #[test]
    fn bytes_cut_short_are_invalid_argument_of_the_whole_request() {
        // A length of 10 with one byte after it.
        let status = decode::<v1::SubmitMoveRequest>(&[0x0a, 10, b'g']);
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        let (field, description) = violation(&status);
        assert!(!description.is_empty());
        assert!(field == "(request)" || field == "game_id", "{field}");
    }

    #[test]
    fn an_undecodable_answer_is_internal() {
        let status = decode::<v1::SubmitMoveResponse>(&[0x0a, 10, b'g']);
        assert_eq!(status.code(), tonic::Code::Internal);
    }

    #[test]
    fn every_method_takes_a_request_message() {
        // The rule the code relies on, over the service descriptors themselves.
        let set = prost_types::FileDescriptorSet::decode(crate::FILE_DESCRIPTOR_SET).unwrap();
        let mut methods = 0;
        for file in set.file.iter().filter(|f| f.package() == "shogi.v1") {
            for service in &file.service {
                for method in &service.method {
                    methods += 1;
                    assert!(
                        method.input_type().ends_with("Request"),
                        "{}.{} takes {}",
                        service.name(),
                        method.name(),
                        method.input_type()
                    );
                    assert!(!method.output_type().ends_with("Request"));
                }
            }
        }
        assert!(methods >= 10, "{methods} methods");
    }
}

/// Sizes on the wire, for a service that sizes an answer as it builds it (a page of a long
/// game that stops where it is full), without prost outside this crate.
pub mod wire_size {
    /// The bytes `message` takes encoded.
    pub fn of(message: &impl prost::Message) -> usize {
        message.encoded_len()
    }

    /// The bytes a length-delimited field of number 1 to 15 holding `len` bytes takes: its
    /// one-byte tag, its length as a varint, and the bytes.
    pub fn field(len: usize) -> usize {
        1 + prost::encoding::encoded_len_varint(len as u64) + len
    }

    #[cfg(test)]
    mod tests {
        use crate::v1 as pb;

        #[test]
        fn a_field_is_its_tag_its_length_and_its_bytes() {
            let state = pb::GameState {
                moves: vec!["7g7f".into()],
                ..Default::default()
            };
            assert_eq!(super::field(4), 6);
            assert_eq!(super::of(&state), super::field(4));
            let answer = pb::GetGameResponse {
                game: Some(state.clone()),
                ..Default::default()
            };
            assert_eq!(super::of(&answer), super::field(super::of(&state)));
            assert_eq!(super::field(200), 1 + 2 + 200);
        }
    }
}
