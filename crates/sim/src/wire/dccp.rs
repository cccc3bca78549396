//! The DCCP header as the simulator carries it (RFC 4340 §5): packet types, the fields the
//! model uses, and the bytes each part takes on the wire.

use super::ackvec::AckVector;

/// Bytes of the IPv4 header in front of every DCCP packet.
pub const IP_HEADER_BYTES: u32 = 20;
/// The generic DCCP header with 48-bit sequence numbers (X = 1).
pub const GENERIC_HEADER_BYTES: u32 = 16;
/// The acknowledgement subheader (48-bit Acknowledgement Number).
pub const ACK_SUBHEADER_BYTES: u32 = 8;
/// Request and Response carry a Service Code.
pub const SERVICE_CODE_BYTES: u32 = 4;
/// The loss-rate option of `bbr-adaptive` ACKs: type 192 (a CCID-specific option sent from the
/// HC-Receiver to the HC-Sender), length 6, the rate in parts per million as a 32-bit integer.
pub const LOSS_RATE_OPTION_BYTES: u32 = 6;
/// Change L(Ack Ratio) carried by the sender until the receiver has seen it: type 32,
/// length 5, feature 5, 16-bit value.
pub const ACK_RATIO_OPTION_BYTES: u32 = 5;
/// Change L(CCID) on the Request: type 32, length 4, feature 1, the CCID.
pub const CCID_OPTION_BYTES: u32 = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DccpType {
    Request,
    Response,
    Data,
    Ack,
    DataAck,
}

impl DccpType {
    /// The 4-bit Type field.
    pub fn code(self) -> u8 {
        match self {
            DccpType::Request => 0,
            DccpType::Response => 1,
            DccpType::Data => 2,
            DccpType::Ack => 3,
            DccpType::DataAck => 4,
        }
    }
    pub fn has_ack(self) -> bool {
        !matches!(self, DccpType::Request | DccpType::Data)
    }
}

/// A DCCP header (Copy; the Ack Vector is stored inline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DccpHeader {
    pub ptype: DccpType,
    pub seq: u64,
    /// Acknowledgement Number (valid when `ptype.has_ack()`).
    pub ack: u64,
    /// Application payload bytes.
    pub len: u32,
    pub ackvec: AckVector,
    /// The receiver's loss rate in parts per million (`bbr-adaptive` ACKs).
    pub loss_rate_ppm: Option<u32>,
    /// A Change L(Ack Ratio) option.
    pub ack_ratio: Option<u16>,
    /// The CCID asked for (Request only).
    pub ccid: u8,
}

impl DccpHeader {
    pub fn new(ptype: DccpType, seq: u64) -> DccpHeader {
        DccpHeader {
            ptype,
            seq,
            ack: 0,
            len: 0,
            ackvec: AckVector::default(),
            loss_rate_ppm: None,
            ack_ratio: None,
            ccid: 0,
        }
    }

    /// Option bytes before padding.
    pub fn options_bytes(&self) -> u32 {
        self.ackvec.option_bytes()
            + if self.loss_rate_ppm.is_some() { LOSS_RATE_OPTION_BYTES } else { 0 }
            + if self.ack_ratio.is_some() { ACK_RATIO_OPTION_BYTES } else { 0 }
            + if self.ptype == DccpType::Request { CCID_OPTION_BYTES } else { 0 }
    }

    /// DCCP header bytes (generic header, subheaders and options padded to 32 bits).
    pub fn header_bytes(&self) -> u32 {
        GENERIC_HEADER_BYTES
            + if self.ptype.has_ack() { ACK_SUBHEADER_BYTES } else { 0 }
            + if matches!(self.ptype, DccpType::Request | DccpType::Response) {
                SERVICE_CODE_BYTES
            } else {
                0
            }
            + self.options_bytes().div_ceil(4) * 4
    }

    /// Bytes on the wire: IPv4 + DCCP header + payload.
    pub fn wire_bytes(&self) -> u32 {
        IP_HEADER_BYTES + self.header_bytes() + self.len
    }
}

#[cfg(test)]
mod tests {
    use super::super::ackvec::STATE_RECEIVED;
    use super::*;

    #[test]
    fn header_sizes_on_the_wire() {
        let mut d = DccpHeader::new(DccpType::Data, 1);
        d.len = 1460;
        assert_eq!(d.header_bytes(), 16);
        assert_eq!(d.wire_bytes(), 20 + 16 + 1460);
        let mut a = DccpHeader::new(DccpType::Ack, 2);
        a.ackvec = AckVector::encode(10, 9, |_| STATE_RECEIVED);
        // 16 + 8 + (2 + 1 option bytes, padded to 4).
        assert_eq!(a.header_bytes(), 28);
        a.loss_rate_ppm = Some(1);
        assert_eq!(a.header_bytes(), 16 + 8 + 12);
        let r = DccpHeader::new(DccpType::Request, 0);
        assert_eq!(r.header_bytes(), 16 + 4 + 4);
        let s = DccpHeader::new(DccpType::Response, 0);
        assert_eq!(s.header_bytes(), 16 + 8 + 4);
        // The header stays small enough to copy around.
        assert!(std::mem::size_of::<DccpHeader>() <= 96, "{}", std::mem::size_of::<DccpHeader>());
    }
}
