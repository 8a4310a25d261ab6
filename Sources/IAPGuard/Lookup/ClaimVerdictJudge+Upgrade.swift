/// A subscription upgraded within its group: Apple ends the old plan's transaction early (revocation type
/// UPGRADE, not a refund; Apple refunds the unused part itself) and the new plan's transaction, under the same
/// original id, carries the entitlement from then on.
extension ClaimVerdictJudge {
    /// The verdict on an upgraded plan's transaction with nothing standing: nothing is owed on it; the headline
    /// names the new plan's transaction and who holds its credit.
    func upgradedVerdict(
        _ verdict: ClaimVerdict, _ t: LookupEvidence.Transaction, at upgraded: Int64,
        credits: [LookupEvidence.Credit]
    ) -> ClaimVerdict {
        let c = context
        var v = verdict
        let successor: String
        if let next = c.upgradeReplacement(of: t) {
            let holders = Set(c.credits(next.transactionID).filter { $0.stands(at: c.now) }.compactMap(\.userID))
            let state =
                holders.isEmpty
                ? "which nothing credits yet (see its own verdict)"
                : "credited to \(holders.sorted().joined(separator: ", "))"
            successor = "the new plan's transaction \(next.transactionID) (\(next.productID ?? "?")), \(state)"
        } else {
            successor = "the new plan's transaction, which the store does not hold yet"
        }
        v.headline =
            "Upgraded, nothing owed: Apple ended transaction \(t.transactionID) (\(t.productID ?? "?"), \(Self.money(t.price, t.currency))) early on \(StorefrontTime.shortUTC(upgraded)) when the customer upgraded (not a refund); the entitlement continues on \(successor)."
        for credit in credits where !credit.stands(at: c.now) {
            v.details.append(
                "Credit \(credit.creditID) of \(credit.userID ?? "?") was reversed \(credit.reversedAt.map(StorefrontTime.shortUTC) ?? "") (\(credit.reversalReason ?? "no reason"))."
            )
        }
        v.details.append(
            "Apple refunds the unused part of the old plan itself: nothing is to be granted or clawed back on this transaction."
        )
        return v
    }

    /// Names the old plan's transaction that the purchase of `t` replaced in an upgrade.
    func upgradeNote(_ t: LookupEvidence.Transaction, replaced: LookupEvidence.Transaction) -> String {
        let when = context.upgradeDate(replaced).map { " on \(StorefrontTime.shortUTC($0))" } ?? ""
        return
            "The upgrade purchase: it replaced transaction \(replaced.transactionID) (\(replaced.productID ?? "?")), which Apple ended early\(when) (not a refund); a new plan bought, not a renewal or a second charge."
    }
}
