/// ParleyLocal — see DESIGN.md for what this target holds.
public enum ParleyLocalModule {}
