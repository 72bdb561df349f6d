package vllmrace.catalogue;

/** The catalogue's own output: plain lines, no tool noise, no colour codes. */
final class Terminal {
    void line(String text) {
        System.out.println(text);
        System.out.flush();
    }

    void blank() {
        line("");
    }

    /** An indented line under the current race or section. */
    void detail(String text) {
        for (String l : text.split("\n")) {
            line("        " + l);
        }
    }

    /** A verdict line: {@code [ok]} when it is what the catalogue expects, {@code [DIFFERS]} otherwise. */
    void verdict(boolean asExpected, String text) {
        line("      " + (asExpected ? "[ok]      " : "[DIFFERS] ") + text);
    }
}
