/// ParleyOpenAI — see DESIGN.md for what this target holds.
public enum ParleyOpenAIModule {}
