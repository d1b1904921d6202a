//! How a queue's AQM is configured: a registry name with its parameters, as the simulator's and
//! the forwarder's JSON configurations carry it.

use aqm::{ParamMap, ParamValue};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An AQM by name with its parameters (numbers in base units).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AqmConfig {
    /// Registry name.
    pub name: String,
    /// Parameters.
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
}

impl AqmConfig {
    /// The parameters as the AQM crate reads them.
    pub fn param_map(&self) -> Result<ParamMap, String> {
        let mut m = ParamMap::new();
        for (k, v) in &self.params {
            let pv = match v {
                serde_json::Value::Bool(b) => ParamValue::Bool(*b),
                serde_json::Value::Number(n) => ParamValue::Num(n.as_f64().unwrap_or(f64::NAN)),
                serde_json::Value::String(s) => ParamValue::Str(s.clone()),
                serde_json::Value::Array(a) => {
                    let mut out = Vec::with_capacity(a.len());
                    for (i, x) in a.iter().enumerate() {
                        out.push(
                            x.as_f64()
                                .ok_or_else(|| format!("{k}: entry {i} is not a number"))?,
                        );
                    }
                    ParamValue::List(out)
                }
                _ => {
                    return Err(format!(
                        "{k}: must be a number, a boolean, a string or a list"
                    ))
                }
            };
            m.insert(k.clone(), pv);
        }
        Ok(m)
    }
}
