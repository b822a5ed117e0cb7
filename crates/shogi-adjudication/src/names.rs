//! The enums the CLI, the proto and the ruleset options name by text: each has `ALL` (every
//! value, in order) and `as_str` (its name), and parses back from that name with [`FromStr`]
//! (`"jsa24".parse::<DeclarationRule>()`), the one way from a name to a value.
//!
//! [`FromStr`]: std::str::FromStr

use crate::{
    AgreementTie, CapMode, ChargeRounding, DeclarationRule, DeclarationTrigger, FailedDeclaration,
    Handicap, IllegalMovePolicy, OrdinaryResult, ResultCode,
};

/// A name none of an enum's values has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {name:?}; known: {}", known.join(", "))]
pub struct UnknownName {
    /// What was named (`declaration rule`, `handicap` ...).
    pub what: &'static str,
    /// The name given.
    pub name: String,
    /// Every name there is.
    pub known: Vec<&'static str>,
}

/// `FromStr` from `as_str` over `ALL`.
macro_rules! named {
    ($($ty:ident: $what:literal,)*) => {$(
        impl std::str::FromStr for $ty {
            type Err = UnknownName;
            fn from_str(name: &str) -> Result<$ty, UnknownName> {
                $ty::ALL
                    .into_iter()
                    .find(|v| v.as_str() == name)
                    .ok_or_else(|| UnknownName {
                        what: $what,
                        name: name.to_owned(),
                        known: $ty::ALL.map(|v| v.as_str()).to_vec(),
                    })
            }
        }
    )*};
}

named! {
    IllegalMovePolicy: "illegal move policy",
    OrdinaryResult: "ordinary result",
    DeclarationRule: "declaration rule",
    DeclarationTrigger: "declaration trigger",
    FailedDeclaration: "failed declaration",
    CapMode: "cap mode",
    AgreementTie: "agreement tie",
    Handicap: "handicap",
    ResultCode: "result code",
    ChargeRounding: "charge rounding",
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value parses back from its name, and nothing else parses.
    #[test]
    fn names_round_trip() {
        fn check<T>(all: &[T], name: fn(&T) -> &'static str)
        where
            T: std::str::FromStr<Err = UnknownName> + PartialEq + std::fmt::Debug,
        {
            for v in all {
                assert_eq!(name(v).parse::<T>().as_ref(), Ok(v));
            }
            let err = "nonsense".parse::<T>().unwrap_err();
            assert_eq!(err.known, all.iter().map(name).collect::<Vec<_>>());
        }
        check(&IllegalMovePolicy::ALL, |v| v.as_str());
        check(&OrdinaryResult::ALL, |v| v.as_str());
        check(&DeclarationRule::ALL, |v| v.as_str());
        check(&DeclarationTrigger::ALL, |v| v.as_str());
        check(&FailedDeclaration::ALL, |v| v.as_str());
        check(&CapMode::ALL, |v| v.as_str());
        check(&AgreementTie::ALL, |v| v.as_str());
        check(&Handicap::ALL, |v| v.as_str());
        check(&ResultCode::ALL, |v| v.as_str());
        check(&ChargeRounding::ALL, |v| v.as_str());
        assert_eq!(
            "jsa23".parse::<DeclarationRule>().unwrap_err().to_string(),
            "unknown declaration rule \"jsa23\"; known: points27, jsa24"
        );
    }
}
