/// Deals scenarios to users by index in O(1): every `spacing`-th user (from index 0) gets one, round robin
/// over ``WorldScenario/allCases``, `casesPerScenario` times. Needs no state, so a user's fate does not
/// depend on any other user.
struct WorldSchedule: Sendable {
    let users: Int
    let casesPerScenario: Int
    let slots: Int
    let spacing: Int

    init(users: Int) {
        self.users = users
        let scenarios = WorldScenario.allCases.count
        casesPerScenario = max(3, users / 500)
        slots = min(users, scenarios * casesPerScenario)
        spacing = slots == 0 ? 1 : max(1, users / slots)
    }

    /// The scenario slot of user `index`, if any.
    func slot(ofUser index: Int) -> Int? {
        guard index % spacing == 0 else { return nil }
        let slot = index / spacing
        return slot < slots ? slot : nil
    }

    /// The scenario and its case number (0, 1, 2, … for variants) for user `index`.
    func scenario(ofUser index: Int) -> (scenario: WorldScenario, caseNumber: Int, slot: Int)? {
        guard let slot = slot(ofUser: index) else { return nil }
        let all = WorldScenario.allCases
        return (all[slot % all.count], slot / all.count, slot)
    }

    /// The user index holding `slot`.
    func user(ofSlot slot: Int) -> Int { slot * spacing }

    /// Account index for helper `j` (0..<4) of `slot`: accomplices, victims and family members get ids
    /// after the regular users.
    func helperIndex(slot: Int, _ j: Int) -> Int { users + slot * 4 + j }

    /// User indices of the allow-listed testers (the `tester-sandbox` and `sandbox-storefront-tester` users).
    var testerIndices: [Int] {
        let all = WorldScenario.allCases
        let positions = [WorldScenario.testerSandbox, .sandboxStorefrontTester].compactMap { all.firstIndex(of: $0) }
        return positions.flatMap { position in
            stride(from: position, to: slots, by: all.count).map { user(ofSlot: $0) }
        }.sorted()
    }
}
