package vllmrace.catalogue;

import java.util.ArrayList;
import java.util.List;
import vllmrace.catalogue.BenchTable.Cell;
import vllmrace.catalogue.BenchTable.Tool;
import vllmrace.races.Race;

/**
 * results/performance.svg: per reported race a row, per engine a marker at its median time to the first counterexample
 * on a log scale; an engine that did not find it in most runs is a hollow marker at the right edge ("not found"), an
 * error a cross there. Plain SVG text, no library.
 */
final class PerformancePlot {
    static final String[] COLOURS = {"#1f77b4", "#d62728", "#2ca02c", "#7f7f7f", "#9467bd", "#ff7f0e"};
    private static final int LEFT = 250;
    private static final int WIDTH = 620;
    private static final int ROW = 18;
    private static final int TOP = 60;

    private PerformancePlot() {
    }

    static String svg(BenchTable table, PerformancePage.Meta meta) {
        List<Race> races = new ArrayList<>(table.reported.keySet());
        double lo = Double.MAX_VALUE;
        double hi = 0;
        for (Race race : races) {
            for (Tool tool : Tool.values()) {
                Cell c = table.cell(race, tool);
                if (c.found()) {
                    lo = Math.min(lo, c.medianMillis());
                    hi = Math.max(hi, c.medianMillis());
                }
            }
        }
        if (hi == 0) {
            lo = 1;
            hi = 1000;
        }
        int minDecade = (int) Math.floor(Math.log10(Math.max(lo, 1e-3)));
        int maxDecade = (int) Math.ceil(Math.log10(Math.max(hi, meta.loopSeconds * 1000.0)));
        if (maxDecade == minDecade) {
            maxDecade++;
        }
        int height = TOP + races.size() * ROW + 60;
        int notFoundX = LEFT + WIDTH + 30;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">%n",
                notFoundX + 60, height));
        svg.append(String.format("<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n"));
        svg.append(String.format("<text x=\"10\" y=\"18\" font-size=\"14\">Time to the first counterexample, median of %d run(s), log scale "
                + "(./catalogue --bench, %s)</text>%n", meta.runs, escape(meta.when)));
        // legend
        int lx = 10;
        for (Tool tool : Tool.values()) {
            svg.append(marker(tool, lx + 5, 36, true));
            String label = tool.label + (table.notRun.containsKey(tool) ? " (not run)" : "");
            svg.append(String.format("<text x=\"%d\" y=\"40\">%s</text>%n", lx + 14, escape(label)));
            lx += 16 + label.length() * 6 + 14;
        }
        // decades
        for (int d = minDecade; d <= maxDecade; d++) {
            double x = x(Math.pow(10, d), minDecade, maxDecade);
            svg.append(String.format("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>%n", x, TOP - 6, x, TOP + races.size() * ROW));
            svg.append(String.format("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n", x, TOP + races.size() * ROW + 14, decade(d)));
        }
        svg.append(String.format("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">not found</text>%n", notFoundX, TOP + races.size() * ROW + 14));
        svg.append(String.format("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">median time to the first violating run (JCStress: its "
                + "test's share of the launch)</text>%n", LEFT + WIDTH / 2, TOP + races.size() * ROW + 32));
        int row = 0;
        for (Race race : races) {
            int y = TOP + row * ROW + ROW / 2;
            if (row % 2 == 0) {
                svg.append(String.format("<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f6f6f6\"/>%n", y - ROW / 2, notFoundX + 60, ROW));
            }
            svg.append(String.format("<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n", LEFT - 8, y + 4, escape(race.name())));
            for (Tool tool : Tool.values()) {
                Cell c = table.cell(race, tool);
                if (!c.ran()) {
                    continue;
                }
                if (c.firstError() != null) {
                    svg.append(String.format("<text x=\"%d\" y=\"%d\" fill=\"%s\" text-anchor=\"middle\">&#x2715;</text>%n",
                            notFoundX + 8 * tool.ordinal() - 20, y + 4, COLOURS[tool.ordinal()]));
                } else if (c.found()) {
                    svg.append(marker(tool, x(c.medianMillis(), minDecade, maxDecade), y, true));
                } else {
                    svg.append(marker(tool, notFoundX + 8 * tool.ordinal() - 20, y, false));
                }
            }
            row++;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static double x(double millis, int minDecade, int maxDecade) {
        double t = (Math.log10(Math.max(millis, Math.pow(10, minDecade))) - minDecade) / (maxDecade - minDecade);
        return LEFT + t * WIDTH;
    }

    private static String marker(Tool tool, double x, int y, boolean filled) {
        String colour = COLOURS[tool.ordinal()];
        String fill = filled ? colour : "none";
        return switch (tool.ordinal() % 3) {
            case 0 -> String.format("<circle cx=\"%.1f\" cy=\"%d\" r=\"4\" fill=\"%s\" stroke=\"%s\"><title>%s</title></circle>%n", x, y, fill, colour, tool.label);
            case 1 -> String.format("<rect x=\"%.1f\" y=\"%d\" width=\"8\" height=\"8\" fill=\"%s\" stroke=\"%s\"><title>%s</title></rect>%n", x - 4, y - 4, fill, colour, tool.label);
            default -> String.format("<polygon points=\"%.1f,%d %.1f,%d %.1f,%d\" fill=\"%s\" stroke=\"%s\"><title>%s</title></polygon>%n",
                    x, y - 5, x - 5, y + 4, x + 5, y + 4, fill, colour, tool.label);
        };
    }

    static String decade(int d) {
        return switch (d) {
            case -3 -> "1 µs";
            case -2 -> "10 µs";
            case -1 -> "100 µs";
            case 0 -> "1 ms";
            case 1 -> "10 ms";
            case 2 -> "100 ms";
            case 3 -> "1 s";
            case 4 -> "10 s";
            case 5 -> "100 s";
            default -> "1e" + d + " ms";
        };
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
