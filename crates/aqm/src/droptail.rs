//! DropTail: a FIFO that admits every packet its buffer can hold (packets or bytes).
//! The baseline of every seed paper; the buffer limit itself is enforced by the queue owner.

use crate::info::AqmInfo;
use crate::params::{LinkContext, ParamError, ParamMap, ParamSpec, Params};
use crate::{Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict};

/// DropTail has no parameters: its limit is the link's buffer (`buffer = 100` packets or `"150kB"`).
pub const PARAMS: &[ParamSpec] = &[];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "droptail",
    summary: "FIFO, tail drop when the buffer (packets or bytes) is full",
    source: "classic FIFO; the baseline (DT) of seeds 000-004",
    params: PARAMS,
    build: |m: &ParamMap, _l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Params::new(PARAMS, m)?;
        Ok(Box::new(DropTail))
    },
};

/// The DropTail algorithm: admits everything; overflow is the buffer's business.
#[derive(Debug, Default, Clone)]
pub struct DropTail;

impl Aqm for DropTail {
    fn name(&self) -> &'static str {
        "droptail"
    }
    #[inline]
    fn enqueue(&mut self, _: &PacketMeta, _: &QueueView, _: Time, _: &mut AqmRng) -> Verdict {
        Verdict::Admit
    }
}
