/// The parameters every user simulation shares.
struct WorldParameters: Sendable {
    let seed: UInt64
    let users: Int
    /// Window start (inclusive) and end (exclusive), epoch ms.
    let start: Int64
    let end: Int64
    let schedule: WorldSchedule
}
