package vllmrace.model.fix;

import java.util.Objects;

/**
 * Where a fix switch comes from, checked against upstream source (the file versions named here were read):
 * {@link Kind#MERGED} fixes are what vLLM main runs ({@link FixSet#upstreamMain()}); {@link Kind#PROPOSED} and
 * {@link Kind#SUITE} fixes are candidates a maintainer can evaluate, never mistaken for upstream behaviour.
 *
 * @param reference the PR (merged or proposing), or the report a suite fix answers
 * @param status    for MERGED, the upstream file version read that has it; for PROPOSED, the PR's state; for SUITE,
 *                  the maintainer comments it follows
 * @param evidence  the upstream line (file, function) that shows the behaviour, or what upstream does instead
 */
public record Provenance(Kind kind, String reference, String status, String evidence) {

    /** The three provenances. */
    public enum Kind {
        /** Merged into vLLM: on main. */
        MERGED("merged"),
        /** Proposed upstream (a PR or a report's suggested fix), not merged. */
        PROPOSED("proposed"),
        /** Proposed by this suite, following maintainers' stated direction; no upstream PR. */
        SUITE("suite proposal");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    public Provenance {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(reference, "reference");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(evidence, "evidence");
    }

    /**
     * A merged PR; {@code inFileVersion} names an upstream file version that has it ({@code path@commit}, a release, or a
     * later copy that says where it was read).
     *
     * @throws IllegalArgumentException when it names no file version ({@link #FILE_VERSION})
     */
    static Provenance merged(String pr, String inFileVersion, String evidence) {
        if (!FILE_VERSION.matcher(inFileVersion).find()) {
            throw new IllegalArgumentException(pr + ": a merged fix names a file version that has it (path@commit or a "
                    + "release), got '" + inFileVersion + "'");
        }
        return new Provenance(Kind.MERGED, pr, "in " + inFileVersion, evidence);
    }

    /**
     * A merged PR whose behaviour was read from its own diff or text, no vllm-project file version with it being
     * readable here: {@code diff} says what it changes, which version was read before it and any later copy read.
     */
    static Provenance mergedFromDiff(String pr, String diff, String evidence) {
        return new Provenance(Kind.MERGED, pr, "read from the PR's diff: " + diff, evidence);
    }

    /**
     * A merged PR known from its own description only (neither its diff nor a vllm-project file version with its lines
     * was readable here): {@code text} quotes what it says it changes and names the versions read before and after it.
     */
    static Provenance mergedFromText(String pr, String text, String evidence) {
        return new Provenance(Kind.MERGED, pr, "read from the PR's description (its diff not read): " + text, evidence);
    }

    /** What a merged fix's status must name: a file version ({@code file.py@hex}, {@code @hex}) or a release ({@code v0.27.1}). */
    public static final java.util.regex.Pattern FILE_VERSION = java.util.regex.Pattern.compile("@[0-9a-f]{7,40}\\b|\\bv\\d+\\.\\d+\\.\\d+");

    /** Whether this provenance is merged and names a file version that has it, or the PR diff or description it was read from. */
    public boolean citesSource() {
        return kind != Kind.MERGED || FILE_VERSION.matcher(status).find() || status.startsWith("read from the PR's");
    }

    /** A proposal upstream, with its state (open, closed, not merged). */
    static Provenance proposed(String reference, String state, String evidence) {
        return new Provenance(Kind.PROPOSED, reference, state, evidence);
    }

    /** A fix this suite proposes for {@code report}, following the maintainer comments in {@code follows}. */
    static Provenance suite(String report, String follows, String evidence) {
        return new Provenance(Kind.SUITE, report, "follows " + follows, evidence);
    }

    public boolean merged() {
        return kind == Kind.MERGED;
    }

    /** One line: kind, reference, status. */
    @Override
    public String toString() {
        return kind.label() + " " + reference + " (" + status + ")";
    }
}
