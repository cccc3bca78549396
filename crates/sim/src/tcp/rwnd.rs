//! Receive-window policies: what window a TCP receiver advertises. `static` advertises the
//! receive buffer; DRWA and ABRWDA size it to keep the sender from overfilling a cellular
//! buffer (the window only ever limits the sender through min(cwnd, rwnd)).
//!
//! One table, [`POLICIES`]: each policy's file declares its [`RwndEntry`] (name, doc line,
//! the keys of `rwnd_params`, whether it reads the radio capacity, and a parse function whose
//! parameters build the policy), the registry shape of every extension point
//! ([`crate::params::plugin`]).

mod abrwda;
mod drwa;

pub use abrwda::{Abrwda, AbrwdaParams};
pub use drwa::{Drwa, DrwaParams};

use crate::params::plugin::{Entry, Params, Spec};
use crate::units::{Dur, Rate, SimTime};
use serde_json::Value;
use std::sync::Arc;

/// A receiver's window policy at run time.
pub trait ReceiveWindow: Send {
    /// A data segment of `bytes` arrived. `rtt` is the receiver's own RTT sample (now minus the
    /// echoed timestamp of one of its ACKs), `channel` the last-hop capacity.
    fn on_data(&mut self, now: SimTime, bytes: u64, rtt: Option<Dur>, channel: Option<Rate>);
    /// The window to advertise in bytes; None: the whole receive buffer.
    fn window(&self) -> Option<u64>;
}

/// Validated parameters of a policy: build one receiver's instance.
pub trait RwndBuild: Params {
    fn build(&self, mss: u64) -> Box<dyn ReceiveWindow>;
    /// The parameters as JSON (the emulator's plan).
    fn json(&self) -> Value;
}

crate::as_params!(dyn RwndBuild);

/// What the world must supply a policy with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RwndNeeds {
    /// The capacity of the receiver's radio link (only the cellular topology has one).
    pub channel: bool,
}

/// One registered receive-window policy (`flows[i].rwnd`), declared in its own file: its
/// parse reads the keys of `rwnd_params`.
pub type RwndEntry = Entry<dyn RwndBuild, (), RwndNeeds>;

/// `static`: advertise the receive buffer.
#[derive(Debug, PartialEq)]
struct StaticWindow;

impl RwndBuild for StaticWindow {
    fn build(&self, _mss: u64) -> Box<dyn ReceiveWindow> {
        unreachable!("the static policy is no policy object (RwndState::is_static)")
    }
    fn json(&self) -> Value {
        Value::Object(Default::default())
    }
}

const STATIC: RwndEntry = RwndEntry {
    name: "static",
    doc: "advertise the receive buffer",
    keys: &[],
    extra: RwndNeeds { channel: false },
    parse: |_, _| Ok(Arc::new(StaticWindow)),
};

/// Every receive-window policy, in listing order.
pub static POLICIES: &[RwndEntry] = &[STATIC, drwa::ENTRY, abrwda::ENTRY];

/// A validated policy with its parameters (`flows[i].rwnd`, `flows[i].rwnd_params`).
pub type RwndPolicy = Spec<dyn RwndBuild, (), RwndNeeds>;

impl RwndPolicy {
    pub fn is_static(&self) -> bool {
        std::ptr::eq(self.entry, &POLICIES[0])
    }
    pub fn needs_channel(&self) -> bool {
        self.entry.extra.channel
    }
    /// `{"kind": name, ...params}`.
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("kind".into(), Value::from(self.entry.name));
        if let Value::Object(p) = self.params.json() {
            m.extend(p);
        }
        Value::Object(m)
    }
}

impl Default for RwndPolicy {
    fn default() -> Self {
        RwndPolicy::new(&POLICIES[0], Arc::new(StaticWindow))
    }
}

/// A receiver's policy instance (none for `static`).
#[derive(Default)]
pub struct RwndState {
    policy: Option<Box<dyn ReceiveWindow>>,
    needs_channel: bool,
}

impl RwndState {
    pub fn new(policy: &RwndPolicy, mss: u64) -> RwndState {
        if policy.is_static() {
            return RwndState::default();
        }
        RwndState { policy: Some(policy.params.build(mss)), needs_channel: policy.needs_channel() }
    }

    pub fn is_static(&self) -> bool {
        self.policy.is_none()
    }

    /// Does this policy read the radio capacity (the world then supplies it)?
    pub fn needs_channel(&self) -> bool {
        self.needs_channel
    }

    pub fn on_data(&mut self, now: SimTime, bytes: u64, rtt: Option<Dur>, channel: Option<Rate>) {
        if let Some(p) = &mut self.policy {
            p.on_data(now, bytes, rtt, channel);
        }
    }

    /// The window to advertise in bytes; None: the whole receive buffer.
    pub fn window(&self) -> Option<u64> {
        self.policy.as_ref().and_then(|p| p.window())
    }
}
