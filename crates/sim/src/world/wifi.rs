//! The world's side of a Wi-Fi BSS (net/wifi): the station links of the `wifi` preset stand
//! at the end of the link vector, from `wifi_from` on (station i's downlink at
//! `wifi_from + 2i`, its uplink one after); a packet whose route reaches one goes to the BSS
//! instead of that (unused) wired link, and leaves it when the BSS's MAC delivers it. The BSS
//! asks for one event kind, `Event::Wifi`, at the time it names.

use super::path::{link_hands, LinkHands};
use super::World;
use crate::engine::Event;
use crate::ids::{LinkId, PacketId};
use crate::net::wifi::Bss;
use crate::units::SimTime;

pub(super) struct WifiRt {
    pub(super) bss: Bss,
    out: Vec<(PacketId, usize, bool)>,
}

impl WifiRt {
    pub(super) fn new(bss: Bss) -> WifiRt {
        WifiRt { bss, out: Vec::with_capacity(128) }
    }
}

impl World {
    /// Packet `pid` reaches Wi-Fi link `l` (≥ `wifi_from`).
    #[cold]
    pub(super) fn wifi_enqueue(&mut self, l: LinkId, pid: PacketId) {
        let now = self.now;
        let e = self.qentry(pid, now);
        let k = (l.0 - self.wifi_from) as usize;
        let w = self.wifi.as_mut().expect("a Wi-Fi link has its BSS");
        let mut cx = link_hands!(self, None);
        if let Some(t) = w.bss.enqueue(now, k / 2, k.is_multiple_of(2), e, &mut cx) {
            self.events.schedule(t, Event::Wifi);
        }
    }

    /// The BSS's event: hand on what it delivered.
    pub(super) fn wifi_event(&mut self) {
        let now: SimTime = self.now;
        let Some(w) = self.wifi.as_mut() else { return };
        let mut out = std::mem::take(&mut w.out);
        let mut cx = link_hands!(self, None);
        let next = w.bss.on_event(now, &mut cx, &mut out);
        if let Some(t) = next {
            self.events.schedule(t, Event::Wifi);
        }
        for (pid, _, _) in out.drain(..) {
            self.forward(pid);
        }
        if let Some(w) = self.wifi.as_mut() {
            w.out = out;
        }
    }
}
