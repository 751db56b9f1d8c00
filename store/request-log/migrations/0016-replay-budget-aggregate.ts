import type { Migration } from "./migration.js";

/**
 * A what-if replay's budget recurrence in one ordered pass (store/request-log/replay-budget.ts):
 * a request is admitted when the spend its counter already admitted is below the room and still
 * fits with the request's amount (or when it costs nothing), and only admitted requests add to
 * that spend. Window sums
 * cannot say so (whether a request counts depends on the ones before it), and reading the
 * records out to replay them costs more than the replay; used as a window aggregate ordered by
 * time, this decides every request of a counter where the records are.
 *
 * The state is the admitted spend, its sign saying how the last request came out: s >= 0 it was
 * admitted (s spent), s < 0 refused (-s - 1 spent). Amounts and room are whole micro-dollars, so
 * the sums are exact in float8.
 */
export const migration: Migration = {
  version: 16,
  name: "replay-budget-aggregate",
  sql: `
CREATE FUNCTION replay_budget_step(state float8, amount float8, room float8)
  RETURNS float8 LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  spent float8 := CASE WHEN state < 0 THEN -state - 1 ELSE state END;
BEGIN
  -- As admission checks a budget: refused once the window is spent, or when the amount overshoots;
  -- a request that costs it nothing is not checked.
  IF amount = 0 OR (spent < room AND spent + amount <= room) THEN
    RETURN spent + amount;
  END IF;
  RETURN -spent - 1;
END
$$;
CREATE AGGREGATE replay_budget_admit(amount float8, room float8) (
  SFUNC = replay_budget_step,
  STYPE = float8,
  INITCOND = '0',
  PARALLEL = SAFE
);
`,
};
