// The exposition checker (test/support/exposition-lint.ts) that stands in for `promtool check
// metrics` on machines without promtool: it passes a clean exposition and names each rule's
// violation. When promtool is on PATH, every case here is also given to it, and it must agree
// (clean stays clean, a bad case is refused too); without it that comparison is skipped, said once.
import { describe, expect, it } from "vitest"
import { lintExposition, promtool } from "../support/exposition-lint.ts"

const HAS_PROMTOOL = promtool("") !== null
if (!HAS_PROMTOOL) console.log("promtool is not on PATH: the comparison with promtool is skipped; the built-in checker runs in full")

const CLEAN = `# HELP app_requests_total Requests served.
# TYPE app_requests_total counter
app_requests_total{route="/a",status="200"} 3
app_requests_total{route="/b \\"quoted\\" \\\\ and\\nline",status="500"} 1
# HELP app_queue_bytes Bytes queued.
# TYPE app_queue_bytes gauge
app_queue_bytes{queue="a"} 0
app_queue_bytes{queue="b"} Nan
app_queue_bytes{queue="c"} NaN
app_queue_bytes{queue="d"} +Inf
app_queue_bytes{queue="e"} -Inf
app_queue_bytes{queue="f"} 1.5e-7 1795305600000
# HELP app_latency_seconds Latency.
# TYPE app_latency_seconds histogram
app_latency_seconds_bucket{route="/a",le="0.1"} 1
app_latency_seconds_bucket{route="/a",le="1"} 2
app_latency_seconds_bucket{route="/a",le="+Inf"} 3
app_latency_seconds_sum{route="/a"} 2.5
app_latency_seconds_count{route="/a"} 3
`

/**
 * Each case: a bad exposition, a fragment of the problem the checker must report, and whether
 * promtool (2.42, Debian 12) refuses it too. Three rules are stricter than promtool's `check
 * metrics`: a duplicate series (Prometheus's scrape drops it as a duplicate sample), a histogram
 * series without its le="+Inf" bucket, a bucket without `le` (histogram_quantile cannot use them).
 */
const BAD: ReadonlyArray<readonly [string, string, string, "promtool too" | "stricter"]> = [
  ["a gauge named _total", "# HELP app_open_total Open.\n# TYPE app_open_total gauge\napp_open_total 1\n", `app_open_total non-counter metrics should not have "_total" suffix`, "promtool too"],
  ["a counter without _total", "# HELP app_hits Hits.\n# TYPE app_hits counter\napp_hits 1\n", `app_hits counter metrics should have "_total" suffix`, "promtool too"],
  ["no HELP", "# TYPE app_x_total counter\napp_x_total 1\n", "app_x_total no help text", "promtool too"],
  ["TYPE twice", "# HELP app_y Y.\n# TYPE app_y gauge\n# TYPE app_y gauge\napp_y 1\n", "app_y second TYPE line", "promtool too"],
  ["HELP twice", "# HELP app_y Y.\n# HELP app_y Y.\n# TYPE app_y gauge\napp_y 1\n", "app_y second HELP line", "promtool too"],
  ["TYPE after the samples", "# HELP app_y Y.\napp_y 1\n# TYPE app_y gauge\n", "app_y TYPE line after its samples", "promtool too"],
  ["a family split in two", "# HELP app_a A.\n# TYPE app_a gauge\napp_a 1\n# HELP app_b B.\n# TYPE app_b gauge\napp_b 1\napp_a{x=\"1\"} 2\n", "app_a family appears twice", "promtool too"],
  ["a duplicate series", "# HELP app_y Y.\n# TYPE app_y gauge\napp_y{a=\"1\",b=\"2\"} 1\napp_y{b=\"2\",a=\"1\"} 2\n", "app_y duplicate series", "stricter"],
  ["an invalid metric name", "# HELP 1app Y.\n# TYPE 1app gauge\n1app 1\n", `invalid metric name "1app"`, "promtool too"],
  ["an invalid label name", "# HELP app_y Y.\n# TYPE app_y gauge\napp_y{a-b=\"1\"} 1\n", `invalid label name "a-b"`, "promtool too"],
  ["a bad escape in a label value", "# HELP app_y Y.\n# TYPE app_y gauge\napp_y{a=\"x\\ty\"} 1\n", "invalid escape", "promtool too"],
  ["an unterminated label value", "# HELP app_y Y.\n# TYPE app_y gauge\napp_y{a=\"x} 1\n", "malformed label set", "promtool too"],
  ["a value that is no number", "# HELP app_y Y.\n# TYPE app_y gauge\napp_y one\n", "malformed value", "promtool too"],
  ["buckets without +Inf", "# HELP app_l_seconds L.\n# TYPE app_l_seconds histogram\napp_l_seconds_bucket{le=\"1\"} 1\napp_l_seconds_sum 1\napp_l_seconds_count 1\n", `buckets do not end with le="+Inf"`, "stricter"],
  ["a bucket without le", "# HELP app_l_seconds L.\n# TYPE app_l_seconds histogram\napp_l_seconds_bucket 1\napp_l_seconds_bucket{le=\"+Inf\"} 1\napp_l_seconds_sum 1\napp_l_seconds_count 1\n", `bucket without a valid "le" label`, "stricter"],
  ["a non-base unit", "# HELP app_wait_milliseconds W.\n# TYPE app_wait_milliseconds gauge\napp_wait_milliseconds 1\n", `use base unit "seconds" instead of "milliseconds"`, "promtool too"],
  ["an abbreviated unit", "# HELP app_wait_ms W.\n# TYPE app_wait_ms gauge\napp_wait_ms 1\n", "metric names should not contain abbreviated units", "promtool too"],
  ["the type in the name", "# HELP app_hits_gauge H.\n# TYPE app_hits_gauge gauge\napp_hits_gauge 1\n", "metric name should not include type 'gauge'", "promtool too"],
  ["a colon", "# HELP app:hits H.\n# TYPE app:hits gauge\napp:hits 1\n", "metric names should not contain ':'", "promtool too"],
  ["camelCase", "# HELP app_openConns O.\n# TYPE app_openConns gauge\napp_openConns{peerName=\"a\"} 1\n", "'snake_case' not 'camelCase'", "promtool too"],
  ["_count on a gauge", "# HELP app_item_count I.\n# TYPE app_item_count gauge\napp_item_count 1\n", `non-histogram and non-summary metrics should not have "_count" suffix`, "promtool too"],
  ["le on a gauge", "# HELP app_y Y.\n# TYPE app_y gauge\napp_y{le=\"1\"} 1\n", `non-histogram metrics should not have "le" label`, "promtool too"]
]

describe("the exposition checker (promtool check metrics, built in)", () => {
  it("passes a clean exposition: counters, gauges (NaN as prom-client writes it, infinities, a timestamp), a histogram, escaped label values", () => {
    expect(lintExposition(CLEAN)).toEqual([])
    if (HAS_PROMTOOL) expect(promtool(CLEAN)).toEqual({ code: 0, output: "" })
  })

  it.each(BAD)("refuses %s", (_what, text, problem, strictness) => {
    const problems = lintExposition(text)
    expect(problems.join("\n")).toContain(problem)
    if (!HAS_PROMTOOL || strictness === "stricter") return
    // promtool refuses it too (a parse error or a lint problem: a non-zero exit).
    expect(promtool(text)?.code, promtool(text)?.output).not.toBe(0)
  })
})
