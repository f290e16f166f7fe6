/// ParleyStore — see DESIGN.md for what this target holds.
public enum ParleyStoreModule {}
