/** Label selectors as apimachinery's LabelSelectorAsSelector and labels.Selector.Matches decide them. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isEmptySelector, selectorMatches, selectorProblem, type LabelSelector } from "./selector.js";

const cases: { name: string; sel: LabelSelector | undefined; labels: Record<string, string>; want: boolean }[] = [
  { name: "absent selects nothing", sel: undefined, labels: { a: "1" }, want: false },
  { name: "empty selects everything", sel: {}, labels: {}, want: true },
  {
    name: "empty lists select everything",
    sel: { matchLabels: {}, matchExpressions: [] },
    labels: { a: "1" },
    want: true,
  },
  { name: "matchLabels equal", sel: { matchLabels: { a: "1" } }, labels: { a: "1", b: "2" }, want: true },
  { name: "matchLabels differ", sel: { matchLabels: { a: "1" } }, labels: { a: "2" }, want: false },
  { name: "matchLabels missing key", sel: { matchLabels: { a: "" } }, labels: {}, want: false },
  { name: "matchLabels empty value present", sel: { matchLabels: { a: "" } }, labels: { a: "" }, want: true },
  {
    name: "In holds",
    sel: { matchExpressions: [{ key: "a", operator: "In", values: ["1", "2"] }] },
    labels: { a: "2" },
    want: true,
  },
  {
    name: "In without key",
    sel: { matchExpressions: [{ key: "a", operator: "In", values: ["1"] }] },
    labels: {},
    want: false,
  },
  {
    name: "NotIn without key holds",
    sel: { matchExpressions: [{ key: "a", operator: "NotIn", values: ["1"] }] },
    labels: {},
    want: true,
  },
  {
    name: "NotIn excluded",
    sel: { matchExpressions: [{ key: "a", operator: "NotIn", values: ["1"] }] },
    labels: { a: "1" },
    want: false,
  },
  { name: "Exists", sel: { matchExpressions: [{ key: "a", operator: "Exists" }] }, labels: { a: "" }, want: true },
  {
    name: "DoesNotExist",
    sel: { matchExpressions: [{ key: "a", operator: "DoesNotExist" }] },
    labels: { a: "" },
    want: false,
  },
  {
    name: "prototype keys are not labels",
    sel: { matchExpressions: [{ key: "toString", operator: "Exists" }] },
    labels: {},
    want: false,
  },
  {
    name: "invalid: In without values",
    sel: { matchExpressions: [{ key: "a", operator: "In", values: [] }] },
    labels: { a: "" },
    want: false,
  },
  {
    name: "invalid: NotIn without values",
    sel: { matchExpressions: [{ key: "a", operator: "NotIn" }] },
    labels: {},
    want: false,
  },
  {
    name: "invalid: Exists with values",
    sel: { matchExpressions: [{ key: "a", operator: "Exists", values: ["x"] }] },
    labels: { a: "x" },
    want: false,
  },
  {
    name: "invalid: unknown operator",
    sel: { matchExpressions: [{ key: "a", operator: "Bogus" }] },
    labels: { a: "" },
    want: false,
  },
];

for (const c of cases) test(`selectorMatches: ${c.name}`, () => assert.equal(selectorMatches(c.sel, c.labels), c.want));

test("selectorProblem names apimachinery's refusals", () => {
  assert.equal(selectorProblem({ matchExpressions: [{ key: "a", operator: "Exists" }] }), undefined);
  assert.match(selectorProblem({ matchExpressions: [{ key: "a", operator: "In" }] }) ?? "", /can't be empty/);
  assert.match(selectorProblem({ matchExpressions: [{ key: "a", operator: "gt" }] }) ?? "", /not a valid/);
});

test("isEmptySelector", () => {
  assert.equal(isEmptySelector(undefined), false);
  assert.equal(isEmptySelector({}), true);
  assert.equal(isEmptySelector({ matchLabels: { a: "b" } }), false);
});
