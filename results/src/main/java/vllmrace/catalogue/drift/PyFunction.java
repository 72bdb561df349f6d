package vllmrace.catalogue.drift;

/**
 * A Python function found by {@link PythonSource}: its dotted qualname, its 1-based line range (from its first
 * decorator to the last line of its body, trailing blank and comment lines excluded) and those lines joined with "\n".
 */
public record PyFunction(String qualname, int startLine, int endLine, String text) {}
