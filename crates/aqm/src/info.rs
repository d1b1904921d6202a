//! What the registry knows of each algorithm ([`AqmInfo`]) and queue discipline
//! ([`QdiscInfo`]): the entry types every algorithm's file fills in and [`crate::registry`]
//! lists, kept apart from the registry so that the algorithms need not name it.

use crate::params::{LinkContext, ParamError, ParamMap, ParamSpec};
use crate::Aqm;

/// Builds a validated instance of an algorithm for a link.
pub type BuildFn = fn(&ParamMap, &LinkContext) -> Result<Box<dyn Aqm>, ParamError>;

/// What the registry knows of an algorithm.
#[derive(Clone, Copy, Debug)]
pub struct AqmInfo {
    /// Name used in scenario files and on the command line.
    pub name: &'static str,
    /// One line: what it is.
    pub summary: &'static str,
    /// Where it comes from (paper + section, RFC + section).
    pub source: &'static str,
    /// Its parameters with their defaults.
    pub params: &'static [ParamSpec],
    /// Builds a validated instance for a link.
    pub build: BuildFn,
}

/// What the registry knows of a queue discipline (the counterpart of [`crate::AqmInfo`] for
/// algorithms that store packets).
#[derive(Clone, Copy, Debug)]
pub struct QdiscInfo {
    /// Name used in scenario files and on the command line.
    pub name: &'static str,
    /// One line: what it is.
    pub summary: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// Its parameters with their defaults.
    pub params: &'static [ParamSpec],
}
