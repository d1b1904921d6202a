//! Parameters: how an algorithm declares them (name, unit, default, meaning), how values given by a
//! user are read against that declaration, and the error that names a bad one.
//!
//! Values arrive in base units: seconds for durations, bits per second for rates, bytes for sizes.
//! The Python layer converts unit strings (`"5ms"`) using each parameter's [`ParamKind`].

use std::collections::BTreeMap;
use std::fmt;

/// A value given for a parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// A number (durations in seconds, rates in bit/s, sizes in bytes).
    Num(f64),
    /// A switch.
    Bool(bool),
    /// A choice among named options.
    Str(String),
    /// A list of numbers (a tabulated function).
    List(Vec<f64>),
}

/// Parameters given by a user, by name.
pub type ParamMap = BTreeMap<String, ParamValue>;

/// The unit and type of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A plain real number.
    Real,
    /// A whole number.
    Int,
    /// A switch.
    Bool,
    /// A duration, in seconds.
    Duration,
    /// A rate, in bits per second.
    Rate,
    /// A size, in bytes.
    Size,
    /// One of the listed names.
    Choice(&'static [&'static str]),
    /// A list of reals.
    List,
}

impl ParamKind {
    /// A short name for the kind (`real`, `duration`, ...), as `aqmlab list` shows it.
    pub fn label(&self) -> &'static str {
        match self {
            ParamKind::Real => "real",
            ParamKind::Int => "int",
            ParamKind::Bool => "bool",
            ParamKind::Duration => "duration",
            ParamKind::Rate => "rate",
            ParamKind::Size => "size",
            ParamKind::Choice(_) => "choice",
            ParamKind::List => "list",
        }
    }
}

/// A parameter's default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefaultValue {
    /// A number in base units.
    Num(f64),
    /// A switch.
    Bool(bool),
    /// A named option.
    Str(&'static str),
    /// Derived from the link at build time; the help text says how.
    Auto,
    /// No default: the parameter must be given.
    Required,
}

/// The declaration of one parameter.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    /// Name as written in a scenario file.
    pub name: &'static str,
    /// Unit and type.
    pub kind: ParamKind,
    /// Default.
    pub default: DefaultValue,
    /// One line: what it is and where it comes from.
    pub help: &'static str,
}

/// A parameter that is unknown, of the wrong type or out of range.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    /// The parameter's name (empty when the error concerns the algorithm name itself).
    pub param: String,
    /// What is wrong and what is allowed.
    pub msg: String,
}

impl ParamError {
    /// An error about parameter `param`.
    pub fn new(param: &str, msg: impl Into<String>) -> Self {
        ParamError {
            param: param.to_string(),
            msg: msg.into(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.param.is_empty() {
            write!(f, "{}", self.msg)
        } else {
            write!(f, "{}: {}", self.param, self.msg)
        }
    }
}

impl std::error::Error for ParamError {}

/// The buffer of the queue an algorithm guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// At most this many waiting packets.
    Packets(u32),
    /// At most this many waiting bytes.
    Bytes(u64),
}

/// What an algorithm may know about its link when it is built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkContext {
    /// Link rate, bit/s.
    pub rate_bps: u64,
    /// The queue's buffer.
    pub buffer: Buffer,
    /// A typical packet size on this link, bytes (used to convert bytes to packets and idle time
    /// to packet times).
    pub mean_pkt_bytes: u32,
}

impl LinkContext {
    /// The buffer expressed in packets of `mean_pkt_bytes`.
    pub fn buffer_pkts(&self) -> f64 {
        match self.buffer {
            Buffer::Packets(n) => n as f64,
            Buffer::Bytes(b) => b as f64 / self.mean_pkt_bytes.max(1) as f64,
        }
    }
}

impl Default for LinkContext {
    fn default() -> Self {
        LinkContext {
            rate_bps: 100_000_000,
            buffer: Buffer::Packets(1000),
            mean_pkt_bytes: 1500,
        }
    }
}

/// Reads given values against a declaration, filling in defaults.
pub struct Params<'a> {
    spec: &'static [ParamSpec],
    given: &'a ParamMap,
}

impl<'a> Params<'a> {
    /// Checks that every given name is declared and has the right type.
    pub fn new(spec: &'static [ParamSpec], given: &'a ParamMap) -> Result<Self, ParamError> {
        for (name, value) in given {
            let Some(s) = spec.iter().find(|s| s.name == name) else {
                let known: Vec<&str> = spec.iter().map(|s| s.name).collect();
                return Err(ParamError::new(
                    name,
                    format!(
                        "unknown parameter; allowed: {}",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            };
            let ok = match (s.kind, value) {
                (ParamKind::Bool, ParamValue::Bool(_)) => true,
                (ParamKind::Choice(opts), ParamValue::Str(v)) => {
                    if !opts.contains(&v.as_str()) {
                        return Err(ParamError::new(
                            name,
                            format!("must be one of {} (got {v:?})", opts.join(", ")),
                        ));
                    }
                    true
                }
                (ParamKind::List, ParamValue::List(_)) => true,
                (ParamKind::Int, ParamValue::Num(x)) => {
                    if x.fract() != 0.0 || !x.is_finite() {
                        return Err(ParamError::new(
                            name,
                            format!("must be a whole number (got {x})"),
                        ));
                    }
                    true
                }
                (
                    ParamKind::Real | ParamKind::Duration | ParamKind::Rate | ParamKind::Size,
                    ParamValue::Num(x),
                ) => {
                    if !x.is_finite() {
                        return Err(ParamError::new(name, format!("must be finite (got {x})")));
                    }
                    true
                }
                _ => false,
            };
            if !ok {
                return Err(ParamError::new(
                    name,
                    format!("must be of kind {} (got {value:?})", s.kind.label()),
                ));
            }
        }
        Ok(Params { spec, given })
    }

    fn spec_of(&self, name: &str) -> &ParamSpec {
        self.spec
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("parameter {name} is read but not declared"))
    }

    /// A number: the given value or the default; `None` when the default is `Auto` and none given.
    pub fn opt_num(&self, name: &str) -> Result<Option<f64>, ParamError> {
        match self.given.get(name) {
            Some(ParamValue::Num(x)) => Ok(Some(*x)),
            Some(_) => unreachable!("checked in Params::new"),
            None => match self.spec_of(name).default {
                DefaultValue::Num(x) => Ok(Some(x)),
                DefaultValue::Auto => Ok(None),
                DefaultValue::Required => Err(ParamError::new(name, "is required")),
                d => panic!("parameter {name} has a non-numeric default {d:?}"),
            },
        }
    }

    /// A number: the given value or the default.
    pub fn num(&self, name: &str) -> Result<f64, ParamError> {
        self.opt_num(name)?
            .ok_or_else(|| ParamError::new(name, "is required"))
    }

    /// A switch.
    pub fn bool(&self, name: &str) -> bool {
        match self.given.get(name) {
            Some(ParamValue::Bool(b)) => *b,
            _ => match self.spec_of(name).default {
                DefaultValue::Bool(b) => b,
                d => panic!("parameter {name} has a non-boolean default {d:?}"),
            },
        }
    }

    /// A choice.
    pub fn choice(&self, name: &str) -> String {
        match self.given.get(name) {
            Some(ParamValue::Str(s)) => s.clone(),
            _ => match self.spec_of(name).default {
                DefaultValue::Str(s) => s.to_string(),
                d => panic!("parameter {name} has a non-choice default {d:?}"),
            },
        }
    }

    /// A list, or `None` when not given.
    pub fn list(&self, name: &str) -> Option<Vec<f64>> {
        match self.given.get(name) {
            Some(ParamValue::List(v)) => Some(v.clone()),
            _ => None,
        }
    }
}

/// Checks `lo (<|<=) x (<|<=) hi` and names the parameter and the allowed range when it fails.
/// `lo_open` / `hi_open` make the bound exclusive.
pub fn check_range(
    name: &str,
    x: f64,
    lo: f64,
    lo_open: bool,
    hi: f64,
    hi_open: bool,
) -> Result<(), ParamError> {
    let lo_ok = if lo_open { x > lo } else { x >= lo };
    let hi_ok = if hi_open { x < hi } else { x <= hi };
    if lo_ok && hi_ok && !x.is_nan() {
        return Ok(());
    }
    let l = if lo_open { '(' } else { '[' };
    let h = if hi_open { ')' } else { ']' };
    let fmt_b = |b: f64| {
        if b.is_infinite() {
            if b > 0.0 {
                "inf".to_string()
            } else {
                "-inf".to_string()
            }
        } else {
            format!("{b}")
        }
    };
    Err(ParamError::new(
        name,
        format!("must be in {l}{}, {}{h} (got {x})", fmt_b(lo), fmt_b(hi)),
    ))
}

/// RED-style thresholds (Floyd & Jacobson 1993 s. 4): `0 <= min_th < max_th <= buffer`, the
/// buffer in packets of the link's mean size. Errors name `min_th` or `max_th`.
pub fn check_thresholds(min_th: f64, max_th: f64, l: &LinkContext) -> Result<(), ParamError> {
    check_thresholds_in(min_th, max_th, l.buffer_pkts(), "packets")
}

/// [`check_thresholds`] for thresholds counted in other units than the link's packets (RED's
/// byte mode counts the queue in units of `mean_pkt_size` bytes): `buf` is the buffer in those
/// units and `unit` names them in the error.
pub fn check_thresholds_in(
    min_th: f64,
    max_th: f64,
    buf: f64,
    unit: &str,
) -> Result<(), ParamError> {
    check_range("min_th", min_th, 0.0, false, f64::INFINITY, true)?;
    if min_th >= max_th || max_th.is_nan() {
        return Err(ParamError::new(
            "min_th",
            format!("must be < max_th (got min_th {min_th} >= max_th {max_th})"),
        ));
    }
    if max_th > buf {
        return Err(ParamError::new(
            "max_th",
            format!("must not exceed the link buffer of {buf} {unit} (got {max_th})"),
        ));
    }
    Ok(())
}
