//! The algorithms by name. Adding an algorithm: one new file and one line in [`REGISTRY`].

pub use crate::info::{AqmInfo, BuildFn, QdiscInfo};
use crate::params::{LinkContext, ParamError, ParamMap};
use crate::Aqm;

/// Every algorithm aqmlab has.
pub static REGISTRY: &[AqmInfo] = &[
    crate::droptail::INFO,
    crate::red::INFO,
    crate::codel::INFO,
    crate::pie::INFO,
    crate::blue::INFO,
    crate::sred::INFO,
    crate::pi::INFO,
    crate::rem::INFO,
    crate::ared::INFO,
    crate::avq::INFO,
    crate::anaqm::INFO,
    crate::paqm::INFO,
    crate::lindrop::INFO,
    crate::laq::INFO,
    crate::apace::INFO,
    crate::modred::INFO,
    crate::dropfn::INFO,
    crate::cobalt::INFO,
];

/// Queue disciplines that store packets in several internal queues (built by the caller, not
/// through [`build`]): FQ-CoDel, DualPI2, CAKE.
pub static QDISCS: &[QdiscInfo] = &[
    crate::fq_codel::FQ_CODEL_INFO,
    crate::dualpi2::DUALPI2_INFO,
    crate::cobalt::CAKE_INFO,
];

/// The algorithm called `name`.
pub fn find(name: &str) -> Option<&'static AqmInfo> {
    REGISTRY.iter().find(|a| a.name == name)
}

/// Builds algorithm `name` with the given parameters for a link; the error names the parameter
/// (or the unknown algorithm) and what is allowed.
pub fn build(
    name: &str,
    params: &ParamMap,
    link: &LinkContext,
) -> Result<Box<dyn Aqm>, ParamError> {
    match find(name) {
        Some(info) => (info.build)(params, link),
        None => {
            let names: Vec<&str> = REGISTRY.iter().map(|a| a.name).collect();
            Err(ParamError::new(
                "",
                format!("unknown AQM {name:?}; known: {}", names.join(", ")),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::DefaultValue;

    #[test]
    fn every_algorithm_builds_with_defaults_and_names_itself() {
        for info in REGISTRY {
            let a = (info.build)(&ParamMap::new(), &LinkContext::default());
            let a = a.unwrap_or_else(|e| panic!("{} with defaults: {e}", info.name));
            assert_eq!(a.name(), info.name);
            assert!(!info.source.is_empty() && !info.summary.is_empty());
            for p in info.params {
                assert!(!p.help.is_empty(), "{}.{} has no help", info.name, p.name);
                assert!(
                    !matches!(p.default, DefaultValue::Required),
                    "{}.{}",
                    info.name,
                    p.name
                );
            }
        }
    }

    #[test]
    fn unknown_names_are_refused_with_the_known_ones() {
        let e = build("nope", &ParamMap::new(), &LinkContext::default()).unwrap_err();
        assert!(
            e.msg.contains("unknown AQM") && e.msg.contains("red"),
            "{e}"
        );
        let mut m = ParamMap::new();
        m.insert("bogus".into(), crate::ParamValue::Num(1.0));
        let e = build("red", &m, &LinkContext::default()).unwrap_err();
        assert_eq!(e.param, "bogus");
        assert!(e.msg.contains("min_th"), "{e}");
    }
}
