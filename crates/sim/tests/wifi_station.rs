//! Station-side queueing (`topology.station_queue`, docs/wifi.md): a station's own transmit
//! path with mac80211's FQ-MAC (the AP's queues.rs code, one instance per station) against
//! the 1000-packet FIFO, with a download and an upload on one station at once.

use crate::common;
use common::{f, refused, run_seeded};
use serde_json::Value;

/// One station at HT MCS 7 (65 Mbit/s, long GI) under an FQ-MAC AP; a CUBIC download, a CUBIC
/// upload and a sparse UDP probe from the station (the probe's one-way delay crosses the
/// station's queue); the station queue `sq`.
fn one_station(sq: &str) -> String {
    format!(
        "name = \"wifi-sta\"\nduration = \"8s\"\nwarmup = \"2s\"\n[topology]\nkind = \"wifi\"\n\
         ap_queue = \"fq_mac\"\nstation_queue = \"{sq}\"\n[[topology.stations]]\nname = \"sta0\"\n\
         mcs = 7\n[tcp]\nrecovery = \"sack\"\n\
         [[flows]]\ncc = \"cubic\"\nsrc = \"server\"\ndst = \"sta0\"\n\
         [[flows]]\ncc = \"cubic\"\nsrc = \"sta0\"\ndst = \"server\"\n\
         [[flows]]\ntransport = \"udp\"\ngroup = \"probe\"\nsrc = \"sta0\"\ndst = \"server\"\n\
         rate = \"0.1Mbps\"\npacket_size = \"100B\"\n"
    )
}

/// The station's MAC throughput alone at MCS 7 (tests/wifi.rs's formula): the 4 ms airtime
/// limit allows 20 subframes of 1544 octets (PPDU 36 + 951·4 = 3840 µs; 21 would take
/// 4028 µs), plus AIFS 43, mean backoff 67.5, SIFS 16 and the block ACK 32 µs:
/// 20·12000 bit / 3998.5 µs = 60.0 Mbit/s.
const C_MBPS: f64 = 60.0;

/// With a FIFO the download's ACKs wait behind the upload's data in the station's 1000
/// packets, so the download gets a small fraction of the air. With FQ-MAC the ACKs are a
/// flow of their own, served at once (fq_codel's new-flow list), and the download is limited
/// by its share of transmit opportunities: EDCA gives the AP and the station equal chances
/// (same AIFS and CW), so the AP has at most half the air, C/2 = 30 Mbit/s. TCP over CoDel at
/// the AP (target 20 ms against an RTT near 40 ms) leaves the AP's queue short of a full
/// aggregate part of the time, so the test asks for half of that, C/4 = 15 Mbit/s, on the
/// mean of four seeds: how the air splits between the download and the upload varies from
/// seed to seed (measured 15.9, 13.5, 19.2 and 23.1 with seeds 1-4, mean 17.9; before the
/// recovery-restart rule of docs/tcp.md 18.0, 17.3, 16.9, 21.3); and that the FIFO's
/// download stays below it on every seed (4-5).
///
/// Latency: the probe's queueing (one-way delay − the 5 ms wire). Behind the FIFO it waits
/// for the upload's standing queue (CUBIC fills the 1000 packets until one is dropped:
/// hundreds of ms at the upload's ~30-45 Mbit/s; measured ~163 ms). With FQ-MAC it is a sparse
/// flow served first at the station's next transmit opportunity: at most the aggregate on the
/// air and the AP's next one, 2 × 4 ms, plus backoffs — about 10 ms (measured ~9 ms). Hence
/// the factor asked: 10, the paper's "order of magnitude", and under 15 ms in absolute terms
/// (a collision's retry adds one more aggregate time).
#[test]
fn station_fq_mac_frees_the_download_under_an_upload() {
    let mut fq_down = Vec::new();
    for seed in [1, 2, 3, 4] {
        let fifo = run_seeded(&one_station("fifo"), Some(seed));
        let fq = run_seeded(&one_station("fq_mac"), Some(seed));
        let down = |v: &Value| f(v, "flows.0.goodput_mbps");
        let probe = |v: &Value| f(v, "flows.2.owd_mean_ms") - 5.0;
        println!(
            "seed {seed}: download FIFO {:.2} FQ-MAC {:.2} Mbit/s (upload {:.2} / {:.2}); probe \
             queueing FIFO {:.1} FQ-MAC {:.1} ms; download RTT FIFO {:.1} FQ-MAC {:.1} ms",
            down(&fifo),
            down(&fq),
            f(&fifo, "flows.1.goodput_mbps"),
            f(&fq, "flows.1.goodput_mbps"),
            probe(&fifo),
            probe(&fq),
            f(&fifo, "flows.0.rtt_mean_ms"),
            f(&fq, "flows.0.rtt_mean_ms"),
        );
        fq_down.push(down(&fq));
        assert!(down(&fifo) < C_MBPS / 4.0, "seed {seed}: FIFO download {:.2}", down(&fifo));
        assert!(
            probe(&fq) * 10.0 < probe(&fifo),
            "seed {seed}: {} vs {}",
            probe(&fq),
            probe(&fifo)
        );
        assert!(probe(&fq) < 15.0, "seed {seed}: FQ-MAC probe queueing {:.1} ms", probe(&fq));
        // The stations' FQ-MAC reports its sojourn; a FIFO run reports what it always did.
        assert_eq!(fq["wifi"]["station_queue"], "fq_mac");
        assert!(f(&fq, "wifi.sojourn.station_fq_mac.samples") > 1000.0);
        assert!(fifo["wifi"].get("station_queue").is_none());
    }
    let mean = fq_down.iter().sum::<f64>() / fq_down.len() as f64;
    assert!(mean >= C_MBPS / 4.0, "FQ-MAC download, mean of four seeds {mean:.2}: {fq_down:?}");
}

#[test]
fn bad_station_queue_names_the_key_and_the_choices() {
    let bad = |v: &str| one_station("fifo").replace("station_queue = \"fifo\"", v);
    refused(&bad("station_queue = \"airtime\""), "topology.station_queue", "fifo, fq_mac");
    refused(&bad("station_queue = \"fq_codel\""), "topology.station_queue", "fifo, fq_mac");
    refused(&bad("station_queue = 1"), "topology.station_queue", "fifo, fq_mac");
}
