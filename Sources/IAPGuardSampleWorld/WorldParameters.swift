/// The parameters every user simulation shares.
struct WorldParameters: Sendable {
    let seed: UInt64
    let users: Int
    /// Window start (inclusive) and end (exclusive), epoch ms.
    let start: Int64
    let end: Int64
    let schedule: WorldSchedule
    /// Fraction of ordinary StoreKit 2 deliveries written as signed transactions; the rest become
    /// verifyReceipt-style records. 1 (everything signed) by default.
    var signSample: Double = 1
}
