package vllmrace.catalogue;

import vllmrace.races.derive.JcstressNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Stream;
import vllmrace.races.Race;
import vllmrace.stress.verdict.JcstressVerdicts;

/**
 * results/jcstress-report/: JCStress's page of each test, merged across runs. A run replaces the pages of its own
 * races' tests and keeps every other race's; the index is the suite's own, listing every page present with the
 * verdict results/verdicts.tsv holds for it (JCStress's own index describes one launch only).
 */
final class JcstressReportPages {
    private JcstressReportPages() {
    }

    static void merge(Path launchReport, Path kept, List<Race> races, Tsv verdicts) throws IOException {
        Files.createDirectories(kept);
        for (Race race : races) {
            for (var variant : JcstressVerdicts.variants(race)) {
                String page = JcstressNames.testName(race, variant) + ".html";
                Path fresh = launchReport.resolve(page);
                if (Files.exists(fresh)) {
                    Files.copy(fresh, kept.resolve(page), StandardCopyOption.REPLACE_EXISTING);
                } else {
                    Files.deleteIfExists(kept.resolve(page));
                }
            }
        }
        writeIndex(kept, verdicts);
    }

    private static void writeIndex(Path kept, Tsv verdicts) throws IOException {
        StringBuilder html = new StringBuilder("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>JCStress pages</title></head><body>\n")
                .append("<h1>JCStress pages of the race catalogue</h1>\n")
                .append("<p>Written by ./catalogue: one page per race and JCStress variant, from the latest run that ran it; ")
                .append("see results/README.md for the verdicts.</p>\n<table border=\"1\" cellpadding=\"4\">\n")
                .append("<tr><th>test</th><th>verdict (results/verdicts.tsv)</th></tr>\n");
        List<Path> pages;
        try (Stream<Path> files = Files.list(kept)) {
            pages = files.filter(p -> p.getFileName().toString().endsWith(".html") && !p.getFileName().toString().equals("index.html"))
                    .sorted().toList();
        }
        for (Path page : pages) {
            String name = page.getFileName().toString();
            String test = name.substring(0, name.length() - ".html".length());
            html.append("<tr><td><a href=\"").append(name).append("\">").append(test).append("</a></td><td>")
                    .append(escape(verdictOf(test, verdicts))).append("</td></tr>\n");
        }
        html.append("</table>\n</body></html>\n");
        Files.writeString(kept.resolve("index.html"), html.toString());
    }

    private static String verdictOf(String test, Tsv verdicts) {
        for (Race race : Race.values()) {
            for (var variant : JcstressVerdicts.variants(race)) {
                if (JcstressNames.testName(race, variant).equals(test)) {
                    List<String> row = verdicts.get(race.name(), "JCStress", variant.label());
                    return row == null ? "not run" : row.get(4) + ": " + row.get(7);
                }
            }
        }
        return "no registry race (a stale page)";
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
