/// A credit judged by the app account token its account held when it was made: the developer can give a
/// transaction another account's token later (App Store Server API's Set App Account Token, as after an
/// account merge), and Apple's later copies carry the new one.
extension ClaimVerdictJudge {
    /// The app account token of transaction `t` that `credit`'s account owns while `buyer`, who bought its
    /// original purchase, does not: Apple's record's, or a verified copy's received by the credit. The
    /// subscription was given the credited account's token, so Apple names that account as its holder.
    func tokenMoved(_ t: LookupEvidence.Transaction, from buyer: String, to credit: LookupEvidence.Credit) -> String? {
        let c = context
        guard let receiver = credit.userID, buyer != receiver else { return nil }
        var tokens: [String] = []
        if let token = c.copyOwnedAtCredit(t, credit: credit)?.appAccountToken?.lowercased() { tokens.append(token) }
        if let token = t.appAccountToken?.lowercased(), c.owns(receiver, token: token) { tokens.append(token) }
        return tokens.first { !c.owns(buyer, token: $0) }
    }

    /// Why `credit` is its account's although Apple's record points elsewhere now: the token changed after the
    /// credit, or a renewal carries the credited account's token while another account bought the original.
    /// `nil` when no token changed hands.
    func tokenChangeNote(_ t: LookupEvidence.Transaction, credit: LookupEvidence.Credit) -> String? {
        let c = context
        guard let receiver = credit.userID else { return nil }
        if let copy = c.copyOwnedAtCredit(t, credit: credit), let held = copy.appAccountToken?.lowercased(),
            let current = t.appAccountToken?.lowercased(), current != held, !c.owns(receiver, token: current)
        {
            let owner = (c.tokenOwners[current] ?? []).sorted().joined(separator: ", ")
            let received = copy.receivedAt.map(StorefrontTime.shortUTC) ?? "before it"
            return
                "Apple's copy received \(received), before credit \(credit.creditID), carried app account token \(held) of \(receiver); Apple's later copies carry \(current)\(owner.isEmpty ? "" : " of \(owner)"): the token was changed after the credit (Set App Account Token, as after an account merge), so the credit was \(receiver)'s when it was made."
        }
        if c.orders(t.transactionID).isEmpty, let original = c.originalPurchase(of: t),
            let buyer = c.payer(of: original.transactionID)?.user, let token = tokenMoved(t, from: buyer, to: credit)
        {
            return
                "\(buyer) bought original transaction \(original.transactionID), but this transaction carries app account token \(token) of \(receiver): the subscription was given \(receiver)'s token (Set App Account Token, as after an account merge), so it is \(receiver)'s."
        }
        return nil
    }
}
