import { expect } from "chai";
import { dashboardExpressions, ruleExpressions, seriesNames } from "../kit/promql.js";

describe("seriesNames: the series a PromQL expression reads", () => {
  it("leaves out functions, aggregations, label names, keywords, strings, numbers and durations", () => {
    const expr = `histogram_quantile(0.95, sum by (le, route) (rate(railgate_http_request_duration_seconds_bucket{route!="/api/v1/audio/speech", status=~"5.."}[$__rate_interval])))
      / ignoring(status) group_left sum without (instance) (rate(railgate_http_requests_total[5m] offset 1h)) > bool 1e-3
      and on (job) up == 1 or vector(0) unless absent(nodejs_eventloop_lag_p99_seconds)`;
    expect(seriesNames(expr).sort()).to.deep.equal([
      "nodejs_eventloop_lag_p99_seconds",
      "railgate_http_request_duration_seconds_bucket",
      "railgate_http_requests_total",
      "up",
    ]);
  });

  it("reads aggregations written with the grouping after the parentheses, and colons in names", () => {
    expect(seriesNames("sum(rate(job:requests:rate5m[5m])) by (le) * 100")).to.deep.equal([
      "job:requests:rate5m",
    ]);
  });

  it("finds expressions in every panel of the dashboard and every alert rule", () => {
    const panels = dashboardExpressions();
    expect(panels.length).to.be.at.least(20);
    expect(panels.every((p) => seriesNames(p.expr).length > 0)).to.equal(true);
    const rules = ruleExpressions().map((r) => r.where);
    expect(rules).to.include.members([
      "rule RailgateHigh5xxRatio",
      "rule RailgateUpstreamErrorRatio",
      "rule RailgateSpeechTimeToFirstByteHigh",
      "rule RailgateStoreUnavailable",
      "rule RailgateBudgetAlmostSpent",
      "rule RailgateCreditsLow",
      "rule RailgateEventLoopLag",
    ]);
  });
});
