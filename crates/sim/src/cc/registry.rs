//! The one table of congestion controls, for every transport.
//!
//! Each controller's own file declares a [`CcEntry`] — the registry shape of every extension
//! point ([`crate::params::plugin`]): its name, a doc line, the keys of its parameter table,
//! the transport it drives, and a parse function that reads the keys into a [`CcBuild`] — the
//! validated parameters, which build a controller per endpoint. Adding a controller is one
//! new file and, in `cc/mod.rs`, its `mod` line and one line in [`CONTROLLERS`].
//!
//! A trailing `+` on a TCP name wraps the controller in the delayed-window-update mechanism of
//! Wang & Yuan 2016 (`cubic+`); the entry gives that name in `plus`. `westwood+` is
//! Westwood+ itself (Linux's `westwood` module), so its wrapped form is `westwood++`.

use super::delayed::{Delayed, DelayedParams, DELAYED_KEYS};
use super::{CongestionControl, DccpControl, CONTROLLERS};
use crate::engine::{SimRng, Stream};
use crate::params::plugin::{Entry, Params, Spec};
use crate::params::{err, Res, Table};
use crate::wire::EcnMode;
use serde_json::Value;
use std::fmt::Debug;

/// Which transport a controller drives (its ACK information and window units differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcTransport {
    /// Windows in bytes, ACKs with SACK (`flows[i].cc` of a TCP flow).
    Tcp,
    /// Windows in whole data packets, Ack Vectors (`flows[i].cc` of a DCCP flow).
    Dccp,
}

/// Validated parameters of one controller: builds a fresh controller for each endpoint.
pub trait CcBuild: Params {
    fn build(&self, ctx: BuildCtx) -> Box<dyn CongestionControl>;
    /// A DCCP controller (the entries of transport DCCP); None for TCP's.
    fn build_dccp(&self, _ctx: BuildCtx) -> Option<Box<dyn DccpControl>> {
        None
    }
    /// The ECN feedback the controller asks for when the flow does not set `ecn` (None: off),
    /// as Linux's TCP_CONG_NEEDS_ECN modules do.
    fn ecn_needs(&self) -> Option<EcnMode> {
        None
    }
}

/// What a controller may use when it is built: the segment size (TCP: the MSS; DCCP: the wire
/// bytes of a data packet), its own random stream, and the kernel tick its clock counts in.
pub struct BuildCtx {
    pub mss: u64,
    pub rng: SimRng,
    /// Linux CONFIG_HZ (`tcp.hz`): CUBIC reads time in these ticks.
    pub hz: u32,
}

crate::as_params!(dyn CcBuild);

/// What the registry records of a controller besides its name, doc, keys and parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CcKind {
    pub transport: CcTransport,
    /// The name of its delayed-update-wrapped form, when it has one (TCP only).
    pub plus: Option<&'static str>,
}

/// One registered controller: its parse reads `cc_params`.
pub type CcEntry = Entry<dyn CcBuild, (), CcKind>;

/// The names a scenario may give for a transport: the base names, then the wrapped ones.
pub fn known_names(tr: CcTransport) -> Vec<&'static str> {
    let of = || CONTROLLERS.iter().filter(move |e| e.extra.transport == tr);
    of().map(|e| e.name).chain(of().filter_map(|e| e.extra.plus)).collect()
}

/// The entry registered under `name` for a transport.
pub fn entry(tr: CcTransport, name: &str) -> Option<&'static CcEntry> {
    CONTROLLERS.iter().find(|e| e.extra.transport == tr && e.name == name)
}

/// A validated choice of controller with its parameters (from `flows[i].cc` and
/// `flows[i].cc_params`).
#[derive(Clone, PartialEq)]
pub struct CcSpec {
    spec: Spec<dyn CcBuild, (), CcKind>,
    /// The delayed-update wrapper's parameters, when the name had the `+`.
    wrap: Option<DelayedParams>,
}

impl Debug for CcSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CcSpec")
            .field("name", &self.name())
            .field("params", &self.spec.params)
            .field("wrap", &self.wrap)
            .finish()
    }
}

/// Stream index of the delayed-update wrapper's generator (derived from the endpoint's).
const WRAPPER_STREAM: u64 = 0xDE1A_7ED0;

impl CcSpec {
    pub fn name(&self) -> &'static str {
        match self.wrap {
            Some(_) => {
                self.spec.entry.extra.plus.expect("only entries with a `+` name are wrapped")
            }
            None => self.spec.entry.name,
        }
    }

    pub fn entry(&self) -> &'static CcEntry {
        self.spec.entry
    }

    /// The parameters, for inspection (tests, listings).
    pub fn params(&self) -> &dyn CcBuild {
        self.spec.params()
    }

    pub fn wrapper(&self) -> Option<&DelayedParams> {
        self.wrap.as_ref()
    }

    /// The ECN feedback the controller requests when the flow does not set `ecn` (None: off).
    pub fn ecn_needs(&self) -> Option<EcnMode> {
        self.spec.params.ecn_needs()
    }

    /// The TCP controller `name` with its default parameters (tests, packetdrill).
    pub fn tcp(name: &str) -> Res<CcSpec> {
        CcSpec::parse(name, None, "cc_params")
    }

    /// Reads a TCP `cc` and its optional parameter table.
    pub fn parse(name: &str, params: Option<&Value>, params_path: &str) -> Res<CcSpec> {
        CcSpec::parse_for(CcTransport::Tcp, name, params, params_path)
    }

    /// Reads `cc` for a transport and its optional parameter table at `params_path`. Each
    /// controller accepts only its own parameters (a wrapped one: the wrapper's and its own);
    /// unknown ones are named with the allowed list.
    pub fn parse_for(
        tr: CcTransport,
        name: &str,
        params: Option<&Value>,
        params_path: &str,
    ) -> Res<CcSpec> {
        let (entry, wrapped) = match entry(tr, name) {
            Some(e) => (e, false),
            None => match CONTROLLERS
                .iter()
                .find(|e| e.extra.transport == tr && e.extra.plus == Some(name))
            {
                Some(e) => (e, true),
                None => {
                    // The name lives next to its parameter table: `flows[0].cc` for `flows[0].cc_params`.
                    let cc_path = params_path.strip_suffix("_params").unwrap_or(params_path);
                    let what = match tr {
                        CcTransport::Tcp => "congestion control",
                        CcTransport::Dccp => "DCCP congestion control",
                    };
                    return err(
                        cc_path,
                        format!(
                            "unknown {what} \"{name}\" (known: {})",
                            known_names(tr).join(", ")
                        ),
                    );
                }
            },
        };
        let empty = Value::Object(serde_json::Map::new());
        let mut t = Table::new(params_path, params.unwrap_or(&empty))?;
        if t.has("ect") && !entry.keys.contains(&"ect") {
            // ECT(1) is the L4S identifier (RFC 9331 §4.2): only a scalable controller may send it.
            return err(&t.key_path("ect"), format!("{name} cannot choose its ECN codepoint: ECT(1) (L4S) needs a scalable controller (dctcp; prague always sends ECT(1))"));
        }
        let own = (entry.parse)(&mut t, &())?;
        let wrap = if wrapped { Some(DelayedParams::read(&mut t)?) } else { None };
        let mut allowed: Vec<&str> = entry.keys.to_vec();
        if wrapped {
            allowed.extend_from_slice(DELAYED_KEYS);
        }
        if allowed.is_empty() {
            // Give a clearer message than an empty allowed list.
            let mut keys: Vec<&String> =
                params.and_then(|p| p.as_object()).map(|m| m.keys().collect()).unwrap_or_default();
            keys.sort();
            if let Some(k) = keys.first() {
                return err(&t.key_path(k), format!("unknown key ({name} takes no parameters)"));
            }
        }
        t.finish(&allowed)?;
        Ok(CcSpec { spec: Spec::new(entry, own), wrap })
    }

    /// The controller of a DCCP endpoint (a spec read for transport DCCP).
    pub fn build_dccp(&self, ctx: BuildCtx) -> Box<dyn DccpControl> {
        self.spec.params.build_dccp(ctx).expect("a DCCP controller's spec")
    }

    /// A controller for one endpoint.
    pub fn build(&self, ctx: BuildCtx) -> Box<dyn CongestionControl> {
        match &self.wrap {
            None => self.spec.params.build(ctx),
            Some(p) => {
                // The inner controller keeps the endpoint's stream (so wrapping does not change
                // the numbers it draws); the wrapper's suspend timer uses a stream seeded from it.
                let seed = (ctx.rng.clone().uniform() * (1u64 << 53) as f64) as u64;
                let own = SimRng::new(seed, Stream::Endpoint, WRAPPER_STREAM);
                let inner = self.spec.params.build(ctx);
                Box::new(Delayed::new(self.name(), inner, p.clone(), own))
            }
        }
    }
}

/// Builds the controller a spec names (the world's call).
pub fn build(spec: &CcSpec, ctx: BuildCtx) -> Box<dyn CongestionControl> {
    spec.build(ctx)
}

/// The `parse` of a controller without parameters: its builder, whatever the table holds
/// (the registry rejects the keys).
#[derive(Debug)]
pub struct NoParams(pub fn(BuildCtx) -> Box<dyn CongestionControl>);

/// The `parse` of a DCCP controller without parameters (a CCID): its builder.
#[derive(Debug)]
pub struct DccpNoParams(pub fn(BuildCtx) -> Box<dyn DccpControl>);

impl CcBuild for DccpNoParams {
    fn build(&self, ctx: BuildCtx) -> Box<dyn CongestionControl> {
        (self.0)(ctx)
    }
    fn build_dccp(&self, ctx: BuildCtx) -> Option<Box<dyn DccpControl>> {
        Some((self.0)(ctx))
    }
}

/// As for [`NoParams`]: the entry is the identity.
impl PartialEq for DccpNoParams {
    fn eq(&self, _: &DccpNoParams) -> bool {
        true
    }
}

/// Two controllers without parameters are the same when their entries are (which
/// [`Spec`]'s equality checks first): there is nothing else to compare.
impl PartialEq for NoParams {
    fn eq(&self, _: &NoParams) -> bool {
        true
    }
}

impl CcBuild for NoParams {
    fn build(&self, ctx: BuildCtx) -> Box<dyn CongestionControl> {
        (self.0)(ctx)
    }
}
