//! Queue-discipline settings: `topology.*_queue = { kind = ..., limit = ..., <params> }`.
//! This file reads what every discipline shares (`kind`, `limit`) and hands the rest of the
//! table to the discipline's own parser, found in the registry (`crate::queue::DISCIPLINES`);
//! each discipline accepts only its own parameters. Defaults and their sources are listed in
//! docs/gateway.md.

use super::{QueueCfg, QueueLimit};
use crate::params::{self as reader, dscp_by_name, err, Res, Table};
use crate::queue::QueueSpec;
use crate::queue::{self, DEFAULT_LIMIT, DISCIPLINES};
use serde_json::Value;

pub(crate) fn queue(path: &str, v: Option<&Value>) -> Res<QueueCfg> {
    let Some(v) = v else { return Ok(QueueCfg::droptail(DEFAULT_LIMIT)) };
    let mut t = Table::new(path, v)?;
    if let Some(Value::String(k)) = v.get("kind") {
        if k == "fq_mac" || k == "airtime" {
            return err(
                &t.key_path("kind"),
                format!(
                    "\"{k}\" is the Wi-Fi AP's own queueing, not a link's queue: set \
                     topology.ap_queue = \"{k}\" on a kind = \"wifi\" topology"
                ),
            );
        }
    }
    let names: Vec<&'static str> = DISCIPLINES.iter().map(|d| d.name).collect();
    let kind_name = t.opt_choice("kind", "queue discipline", &names)?.unwrap_or("droptail");
    let def = queue::lookup(kind_name).expect("opt_choice() only returns known kinds");
    let limit = match t.get("limit") {
        None => def.extra,
        Some(lv) => queue_limit(&t.key_path("limit"), lv)?,
    };
    let params = (def.parse)(&mut t, &limit)?;
    let mut allowed = vec!["kind", "limit"];
    allowed.extend_from_slice(def.keys);
    t.finish(&allowed)?;
    Ok(QueueCfg { spec: QueueSpec::new(def, params), limit })
}

fn queue_limit(path: &str, v: &Value) -> Res<QueueLimit> {
    let s = reader::as_str(path, v)?;
    let limit = if let Some(n) = s.strip_suffix('p') {
        match n.trim().parse::<u64>() {
            Ok(p) => QueueLimit::Packets(p),
            Err(_) => {
                return err(path, format!("invalid packet count \"{s}\" (expected e.g. \"500p\")"))
            }
        }
    } else {
        QueueLimit::Bytes(reader::size(path, v).map_err(|mut e| {
            e.message = format!("{} or a packet count such as \"500p\"", e.message);
            e
        })?)
    };
    match limit {
        QueueLimit::Bytes(0) | QueueLimit::Packets(0) => {
            err(path, format!("must be greater than 0 (got \"{s}\")"))
        }
        l => Ok(l),
    }
}

/// A flow's DSCP (`dscp`): a name ("BE", "CS0".."CS7", "AF11".."AF43", "EF", "VA", "LE") or a
/// number 0..63. Flow-aware disciplines (CAKE's diffserv tins) read it from the packets.
pub(crate) fn flow_dscp(t: &mut Table) -> Res<u8> {
    let path = t.key_path("dscp");
    let Some(v) = t.get("dscp") else { return Ok(0) };
    const FORMS: &str = "a number 0..63 or a name: BE, LE, CS0..CS7, AF11..AF43, EF, VA";
    if let Value::Number(_) = v {
        return reader::as_int(&path, v, 0, 63).map(|n| n as u8);
    }
    let Value::String(s) = v else { return err(&path, format!("expected {FORMS}")) };
    dscp_by_name(s)
        .map_or_else(|| err(&path, format!("unknown DSCP \"{s}\" (expected {FORMS})")), Ok)
}

/// A flow's sender host name (`host`): flows naming the same host share it, which host-aware
/// disciplines (CAKE's host isolation) see as one source address. None: a host of its own.
pub(crate) fn flow_host(t: &mut Table) -> Res<Option<String>> {
    let path = t.key_path("host");
    match t.opt_str("host")? {
        Some("") => err(&path, "must not be empty"),
        h => Ok(h.map(str::to_string)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{CodelParams, PieParams, RedParams, StepParams, Threshold};
    use crate::units::Dur;
    use serde_json::json;

    fn parse(v: Value) -> Res<QueueCfg> {
        queue("topology.bottleneck_queue", Some(&v))
    }

    fn error_of(v: Value) -> (String, String) {
        let e = parse(v).unwrap_err();
        (e.path, e.message)
    }

    fn red_params(v: Value) -> RedParams {
        *parse(v).unwrap().params_as::<RedParams>().expect("RED parameters")
    }

    #[test]
    fn red_defaults_are_linux_like() {
        // Talau 2019 Table 3: memory 97 kB, min_th = memory/12, max_th = memory/4.
        let p = red_params(json!({ "kind": "red", "limit": "97KB" }));
        assert!((p.min_th - 97_000.0 / 12.0).abs() < 1e-9);
        assert!((p.max_th - 97_000.0 / 4.0).abs() < 1e-9);
        assert_eq!(
            (p.q_w, p.max_p, p.gentle, p.ecn, p.adapt_interval),
            (0.002, 0.02, true, false, None)
        );
        let a = red_params(json!({ "kind": "ared", "limit": "97KB" }));
        assert_eq!(a.adapt_interval, Some(Dur::from_millis(500)));
    }

    #[test]
    fn red_thresholds_in_bytes_or_packets() {
        // Byte limit: packets convert at 1500 B.
        let p = red_params(
            json!({ "kind": "red", "limit": "150KB", "min_th": "5p", "max_th": "30KB" }),
        );
        assert_eq!((p.min_th, p.max_th), (7500.0, 30_000.0));
        // Packet limit: the queue is counted in packets, bytes convert at 1500 B.
        let p = red_params(json!({ "kind": "red", "limit": "100p", "min_th": "15KB" }));
        assert_eq!((p.min_th, p.max_th), (10.0, 30.0));
        let p = red_params(json!({ "kind": "red", "limit": "120p" }));
        assert_eq!((p.min_th, p.max_th), (10.0, 30.0));
    }

    #[test]
    fn red_bad_thresholds_name_their_key() {
        let (p, m) = error_of(
            json!({ "kind": "red", "limit": "100KB", "min_th": "20KB", "max_th": "10KB" }),
        );
        assert_eq!(p, "topology.bottleneck_queue.min_th");
        assert!(m.contains("must be below max_th"), "{m}");
        let (p, _) = error_of(
            json!({ "kind": "red", "limit": "100KB", "min_th": "10KB", "max_th": "10KB" }),
        );
        assert_eq!(p, "topology.bottleneck_queue.min_th");
        let (p, m) = error_of(json!({ "kind": "red", "limit": "100KB", "max_th": "200KB" }));
        assert_eq!(p, "topology.bottleneck_queue.max_th");
        assert!(m.contains("queue limit"), "{m}");
        let (p, _) = error_of(json!({ "kind": "red", "limit": "100KB", "min_th": "lots" }));
        assert_eq!(p, "topology.bottleneck_queue.min_th");
    }

    #[test]
    fn probabilities_outside_zero_one_are_rejected() {
        let (p, m) = error_of(json!({ "kind": "red", "max_p": 1.5 }));
        assert_eq!(p, "topology.bottleneck_queue.max_p");
        assert!(m.contains("[0, 1]"), "{m}");
        assert_eq!(
            error_of(json!({ "kind": "ared", "max_p": -0.1 })).0,
            "topology.bottleneck_queue.max_p"
        );
        assert_eq!(
            error_of(json!({ "kind": "red", "q_w": 0.0 })).0,
            "topology.bottleneck_queue.q_w"
        );
        assert_eq!(error_of(json!({ "kind": "red", "q_w": 2 })).0, "topology.bottleneck_queue.q_w");
    }

    #[test]
    fn each_kind_accepts_only_its_own_keys() {
        let (p, m) = error_of(json!({ "kind": "codel", "max_p": 0.1 }));
        assert_eq!(p, "topology.bottleneck_queue.max_p");
        assert!(m.contains("allowed: kind, limit, target, interval, ecn"), "{m}");
        let (p, m) = error_of(json!({ "kind": "red", "interval": "1s" }));
        assert_eq!(p, "topology.bottleneck_queue.interval");
        assert!(m.contains("allowed: kind, limit, min_th"), "{m}");
        assert_eq!(
            error_of(json!({ "kind": "droptail", "target": "5ms" })).0,
            "topology.bottleneck_queue.target"
        );
        assert_eq!(error_of(json!({ "target": "5ms" })).0, "topology.bottleneck_queue.target");
        assert_eq!(
            error_of(json!({ "kind": "pie", "gentle": true })).0,
            "topology.bottleneck_queue.gentle"
        );
        let (p, m) = error_of(json!({ "kind": "fq-codel" }));
        assert_eq!(p, "topology.bottleneck_queue.kind");
        assert!(m.contains("known: droptail, red, ared, codel, pie, step, fq_codel"), "{m}");
    }

    #[test]
    fn codel_and_pie_defaults_and_checks() {
        let q = parse(json!({ "kind": "codel" })).unwrap();
        assert_eq!((q.kind(), q.limit), ("codel", QueueLimit::Packets(1000)));
        let c = q.params_as::<CodelParams>().unwrap();
        assert_eq!(
            *c,
            CodelParams {
                target: Dur::from_millis(5),
                interval: Dur::from_millis(100),
                ecn: false
            }
        );
        let p = *parse(json!({ "kind": "pie", "ecn": true }))
            .unwrap()
            .params_as::<PieParams>()
            .unwrap();
        assert_eq!(
            (p.target, p.t_update, p.max_burst),
            (Dur::from_millis(15), Dur::from_millis(15), Dur::from_millis(150))
        );
        assert_eq!((p.alpha, p.beta, p.ecn, p.derandomize), (0.125, 1.25, true, true));
        assert_eq!(
            error_of(json!({ "kind": "codel", "target": "0ms" })).0,
            "topology.bottleneck_queue.target"
        );
        assert_eq!(
            error_of(json!({ "kind": "pie", "alpha": -1 })).0,
            "topology.bottleneck_queue.alpha"
        );
        assert_eq!(
            error_of(json!({ "kind": "pie", "t_update": "0s" })).0,
            "topology.bottleneck_queue.t_update"
        );
        assert_eq!(
            error_of(json!({ "kind": "ared", "interval": "0s" })).0,
            "topology.bottleneck_queue.interval"
        );
    }

    #[test]
    fn missing_queue_is_droptail_with_the_default_limit() {
        let q = queue("topology.reverse_queue", None).unwrap();
        assert_eq!((q.kind(), q.limit), ("droptail", QueueLimit::Packets(1000)));
        let q = parse(json!({ "limit": "50KB" })).unwrap();
        assert_eq!((q.kind(), q.limit), ("droptail", QueueLimit::Bytes(50_000)));
    }

    #[test]
    fn step_threshold_forms_and_checks() {
        let k = |v: Value| parse(v).unwrap().params_as::<StepParams>().unwrap().threshold;
        assert_eq!(k(json!({ "kind": "step" })), Threshold::Time(Dur::from_millis(1)));
        assert_eq!(
            k(json!({ "kind": "step", "threshold": "500us" })),
            Threshold::Time(Dur::from_micros(500))
        );
        assert_eq!(k(json!({ "kind": "step", "threshold": "30KB" })), Threshold::Bytes(30_000));
        assert_eq!(k(json!({ "kind": "step", "threshold": "20p" })), Threshold::Packets(20));
        let path = "topology.bottleneck_queue.threshold";
        for bad in [
            json!("soon"),
            json!(5),
            json!("0ms"),
            json!("0p"),
            json!("-1ms"),
            json!("2.5p"),
            json!("1000p"),
            json!("1.5MB"),
        ] {
            let (p, m) = error_of(json!({ "kind": "step", "threshold": bad }));
            assert_eq!(p, path, "{bad}: {m}");
            assert!(
                m.contains("\"1ms\"")
                    || m.contains("greater than 0")
                    || m.contains("negative")
                    || m.contains("queue limit"),
                "{bad}: {m}"
            );
        }
        let (_, m) = error_of(json!({ "kind": "step", "limit": "100p", "threshold": "100p" }));
        assert!(m.contains("below the queue limit"), "{m}");
        assert_eq!(
            error_of(json!({ "kind": "step", "ecn": true })).0,
            "topology.bottleneck_queue.ecn"
        );
    }

    #[test]
    fn dscp_names_and_numbers() {
        for (n, v) in [
            ("BE", 0),
            ("cs1", 8),
            ("CS7", 56),
            ("AF11", 10),
            ("AF41", 34),
            ("AF43", 38),
            ("EF", 46),
            ("LE", 1),
            ("VA", 44),
        ] {
            assert_eq!(dscp_by_name(n), Some(v), "{n}");
        }
        for bad in ["CS8", "AF14", "AF51", "AF1", "XX", "", "CS"] {
            assert_eq!(dscp_by_name(bad), None, "{bad}");
        }
        let read = |v: Value| {
            let w = json!({ "dscp": v });
            let mut t = Table::new("flows[0]", &w).unwrap();
            flow_dscp(&mut t)
        };
        assert_eq!(read(json!("EF")).unwrap(), 46);
        assert_eq!(read(json!(63)).unwrap(), 63);
        for bad in [json!(64), json!(-1), json!("AF99"), json!(true), json!(1.5)] {
            let e = read(bad.clone()).unwrap_err();
            assert_eq!(e.path, "flows[0].dscp", "{bad}");
        }
        let w = json!({ "host": "" });
        let mut t = Table::new("flows[0]", &w).unwrap();
        assert_eq!(flow_host(&mut t).unwrap_err().path, "flows[0].host");
    }

    #[test]
    fn fq_codel_defaults_and_checks() {
        let q = parse(json!({ "kind": "fq_codel" })).unwrap();
        assert_eq!(q.limit, QueueLimit::Packets(10_240));
        let p = *q.params_as::<crate::queue::FqCodelParams>().unwrap();
        assert_eq!(
            (p.flows, p.quantum, p.memory_limit, p.drop_batch, p.ce_threshold),
            (1024, 1514, 32 << 20, 64, None)
        );
        assert_eq!(
            (p.codel.target, p.codel.interval, p.codel.ecn),
            (Dur::from_millis(5), Dur::from_millis(100), true)
        );
        let p = *parse(json!({ "kind": "fq_codel", "ce_threshold": "1ms", "ecn": false }))
            .unwrap()
            .params_as::<crate::queue::FqCodelParams>()
            .unwrap();
        assert_eq!((p.ce_threshold, p.codel.ecn), (Some(Dur::from_millis(1)), false));
        for (k, bad) in [
            ("flows", json!(0)),
            ("flows", json!(65_537)),
            ("flows", json!("8")),
            ("quantum", json!(1499)),
            ("quantum", json!(300)),
            ("quantum", json!(-1)),
            ("target", json!("0ms")),
            ("interval", json!("0s")),
            ("interval", json!(5)),
            ("memory_limit", json!("1KB")),
            ("memory_limit", json!("lots")),
            ("ecn", json!("yes")),
            ("ce_threshold", json!("0ms")),
            ("drop_batch", json!(0)),
            ("min_th", json!("5p")),
        ] {
            let (p, m) = error_of(json!({ "kind": "fq_codel", k: bad }));
            assert_eq!(p, format!("topology.bottleneck_queue.{k}"), "{k} = {bad}: {m}");
        }
        let (_, m) = error_of(json!({ "kind": "fq_codel", "quantum": 1000 }));
        assert!(m.contains("at least one MTU"), "{m}");
    }

    #[test]
    fn dualpi2_defaults_and_checks() {
        use crate::queue::{DualPi2Params, StepThresh};
        let q = parse(json!({ "kind": "dualpi2" })).unwrap();
        assert_eq!(q.limit, QueueLimit::Packets(10_000));
        let p = *q.params_as::<DualPi2Params>().unwrap();
        assert_eq!(
            (p.target, p.tupdate, p.tshift),
            (Dur::from_millis(15), Dur::from_millis(16), Dur::from_millis(30))
        );
        assert_eq!(
            (p.alpha, p.beta, p.coupling_factor, p.drop_on_overload),
            (0.16, 3.2, 2.0, true)
        );
        assert_eq!(p.step_thresh, StepThresh::Time(Dur::from_millis(1)));
        let p = *parse(json!({ "kind": "dualpi2", "step_thresh": "5p" }))
            .unwrap()
            .params_as::<DualPi2Params>()
            .unwrap();
        assert_eq!(p.step_thresh, StepThresh::Packets(5));
        for (k, bad) in [
            ("target", json!("0ms")),
            ("tupdate", json!("0s")),
            ("alpha", json!(-0.1)),
            ("beta", json!(101)),
            ("step_thresh", json!("0ms")),
            ("step_thresh", json!("0p")),
            ("step_thresh", json!("soon")),
            ("step_thresh", json!(1)),
            ("min_qlen_step", json!(-1)),
            ("coupling_factor", json!(0.5)),
            ("coupling_factor", json!(65)),
            ("drop_on_overload", json!(1)),
            ("tshift", json!("x")),
            ("quantum", json!(1514)),
        ] {
            let (p, m) = error_of(json!({ "kind": "dualpi2", k: bad }));
            assert_eq!(p, format!("topology.bottleneck_queue.{k}"), "{k} = {bad}: {m}");
        }
        let (p, _) = error_of(json!({ "kind": "dualpi2", "alpha": 0, "beta": 0 }));
        assert_eq!(p, "topology.bottleneck_queue.alpha");
    }

    #[test]
    fn cake_defaults_and_checks() {
        use crate::queue::{CakeParams, Diffserv, Isolation};
        let q = parse(json!({ "kind": "cake" })).unwrap();
        assert_eq!(q.limit, QueueLimit::Bytes(4 << 20));
        let p = *q.params_as::<CakeParams>().unwrap();
        assert_eq!((p.bandwidth, p.overhead, p.mpu, p.ack_filter), (None, 0, 0, false));
        assert_eq!((p.isolation, p.diffserv), (Isolation::TripleIsolate, Diffserv::BestEffort));
        let q = json!({
            "kind": "cake", "isolation": "dual-dsthost", "diffserv": "diffserv4",
            "ack-filter": true, "bandwidth": "20Mbps", "overhead": -4, "mpu": 64
        });
        let p = *parse(q).unwrap().params_as::<CakeParams>().unwrap();
        assert_eq!(
            (p.isolation, p.diffserv, p.ack_filter, p.overhead, p.mpu),
            (Isolation::DualDstHost, Diffserv::Diffserv4, true, -4, 64)
        );
        assert_eq!(p.bandwidth, Some(crate::units::Rate(20_000_000)));
        for (k, bad) in [
            ("isolation", json!("triple")),
            ("isolation", json!(3)),
            ("diffserv", json!("diffserv8")),
            ("bandwidth", json!("0Mbps")),
            ("bandwidth", json!("fast")),
            ("overhead", json!(-65)),
            ("overhead", json!(257)),
            ("mpu", json!(-1)),
            ("mpu", json!(300)),
            ("ack-filter", json!("aggressive")),
            ("target", json!("0ms")),
            ("target", json!("200ms")),
            ("rtt", json!("0s")),
            ("flows", json!(8)),
        ] {
            let (p, m) = error_of(json!({ "kind": "cake", k: bad }));
            assert_eq!(p, format!("topology.bottleneck_queue.{k}"), "{k} = {bad}: {m}");
        }
        let (_, m) = error_of(json!({ "kind": "cake", "isolation": "triple" }));
        assert!(m.contains("known: flowblind, srchost, dsthost, hosts, flows, dual-srchost, dual-dsthost, triple-isolate"), "{m}");
    }
}
