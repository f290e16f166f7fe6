import ParleyStore

extension ClientTokenClaims {
    /// Whether these claims may join `instance`: a token minted for that instance, or one of
    /// the instance's own user (and, when agent-scoped, for the instance's agent).
    public func mayJoin(_ instance: InstanceRecord) -> Bool {
        if let agentLimit = agentID, agentLimit != instance.agentID { return false }
        return instanceID == instance.id || instanceID == nil && subject == instance.userID
    }
}
