//! Bearer-token authentication, as a tonic interceptor.

use std::sync::Arc;
use tonic::{Request, Status, service::Interceptor};

/// Requires `authorization: Bearer <token>` when a token is configured; lets every call through
/// otherwise.
#[derive(Clone, Default)]
pub struct BearerAuth {
    token: Option<Arc<[u8]>>,
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth")
            .field("enabled", &self.token.is_some())
            .finish()
    }
}

impl BearerAuth {
    /// An interceptor for `token`, or a pass-through for `None`.
    pub fn new(token: Option<&str>) -> BearerAuth {
        BearerAuth {
            token: token.map(|t| Arc::from(t.as_bytes())),
        }
    }
}

impl Interceptor for BearerAuth {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(expected) = &self.token else {
            return Ok(request);
        };
        let given = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "));
        match given {
            Some(given) if constant_time_eq(given, expected) => Ok(request),
            _ => Err(Status::unauthenticated("missing or wrong bearer token")),
        }
    }
}

/// Compares without an early exit, so that the time taken does not tell how much of a guess
/// was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_required_when_set() {
        let mut open = BearerAuth::new(None);
        assert!(open.call(Request::new(())).is_ok());
        let mut auth = BearerAuth::new(Some("s3cret"));
        assert!(auth.call(Request::new(())).is_err());
        let mut req = Request::new(());
        req.metadata_mut()
            .insert("authorization", "Bearer s3cret".parse().unwrap());
        assert!(auth.call(req).is_ok());
        let mut req = Request::new(());
        req.metadata_mut()
            .insert("authorization", "Bearer s3creT".parse().unwrap());
        assert!(auth.call(req).is_err());
    }
}
