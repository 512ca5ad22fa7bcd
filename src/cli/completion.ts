/**
 * `opcat completion bash|zsh|fish`: shell completion of commands, subcommands, flags and flag values
 * (`-o json|yaml`, `--migrate-level`; a flag taking a path completes file names), generated from the
 * command tree itself (so it never falls behind the CLI), with opm's `alpha` spellings beside opcat's.
 */
import type { Command } from "commander";
import { flagValues } from "./flags.js";

interface Node {
  path: string[];
  subs: string[];
  flags: string[];
  /** Flags that take a value (every spelling), with the values they accept; [] completes file names. */
  values: { flags: string[]; values: readonly string[] }[];
}

function walk(cmd: Command, path: string[] = [], out: Node[] = []): Node[] {
  const flags = cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x)));
  const values = cmd.options
    .filter((o) => o.required || o.optional)
    .map((o) => ({
      flags: [o.short, o.long].filter((x): x is string => Boolean(x)),
      values: flagValues(o) ?? [],
    }));
  out.push({ path, subs: cmd.commands.map((c) => c.name()), flags: [...flags, "--help"], values });
  for (const c of cmd.commands) walk(c, [...path, c.name()], out);
  return out;
}

/** opm's `alpha` spellings (src/cli/main.ts rewriteOpmAlpha): the alpha path, and the command it runs. */
const ALPHA: [string[], string[]][] = [
  [["alpha", "list"], ["list"]],
  [["alpha", "render-graph"], ["render-graph"]],
  [
    ["alpha", "render-template"],
    ["template", "render"],
  ],
  [
    ["alpha", "render-veneer"],
    ["template", "render"],
  ],
  [
    ["alpha", "convert-template", "basic"],
    ["template", "convert"],
  ],
  [["alpha", "bundle"], ["bundle"]],
];

const same = (a: string[], b: string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** The command tree with the `alpha` nodes added (each a copy of what it runs, its subcommands too). */
function withAlpha(nodes: Node[]): Node[] {
  const out = [...nodes];
  const first = new Set<string>();
  for (const [alias, target] of ALPHA) {
    if (!nodes.some((n) => same(n.path, target))) continue;
    first.add(alias[1]);
    for (const n of nodes)
      if (same(n.path.slice(0, target.length), target))
        out.push({ ...n, path: [...alias, ...n.path.slice(target.length)] });
    // a path of three words (convert-template basic): the middle word offers the last
    if (alias.length === 3) out.push({ path: alias.slice(0, 2), subs: [alias[2]], flags: ["--help"], values: [] });
  }
  out.push({ path: ["alpha"], subs: [...first], flags: ["--help"], values: [] });
  return out;
}

function fishScript(nodes: Node[]): string {
  const lines = ["# opcat completion for fish: opcat completion fish | source"];
  for (const n of nodes) {
    const cond =
      n.path.length === 0 ? "__fish_use_subcommand" : `__fish_seen_subcommand_from ${n.path[n.path.length - 1]}`;
    for (const s of n.subs) lines.push(`complete -c opcat -f -n '${cond}' -a '${s}'`);
    for (const f of n.flags.filter((x) => x.startsWith("--"))) {
      const v = n.values.find((x) => x.flags.includes(f));
      const arg = v === undefined ? "" : v.values.length > 0 ? ` -x -a '${v.values.join(" ")}'` : " -r";
      const short = v?.flags.find((x) => !x.startsWith("--"));
      lines.push(`complete -c opcat -n '${cond}' -l '${f.slice(2)}'${short ? ` -s '${short.slice(1)}'` : ""}${arg}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** One `case "$path"` arm: the values of the flag just typed (`$prev`), else subcommands and flags. */
function bashArm(n: Node): string {
  const words = [...n.subs, ...n.flags].join(" ");
  if (n.values.length === 0) return `    "${n.path.join(" ")}") words="${words}" ;;`;
  const arms = n.values.map((v) => `${v.flags.join("|")}) words="${v.values.join(" ")}" ;;`);
  return `    "${n.path.join(" ")}") case "$prev" in ${arms.join(" ")} *) words="${words}" ;; esac ;;`;
}

export function completionScript(program: Command, shell: "bash" | "zsh" | "fish"): string {
  const nodes = withAlpha(walk(program));
  if (shell === "fish") return fishScript(nodes);
  const body = `_opcat() {
  local cur prev path="" w i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    case "\${path:+$path }$w" in
${nodes
  .filter((n) => n.path.length > 0)
  .map((n) => `      "${n.path.join(" ")}") path="${n.path.join(" ")}" ;;`)
  .join("\n")}
    esac
  done
  local words=""
  case "$path" in
${nodes.map(bashArm).join("\n")}
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
  [[ \${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=( $(compgen -f -- "$cur") )
}
`;
  if (shell === "zsh")
    return (
      `# opcat completion for zsh: source <(opcat completion zsh)\n` +
      `autoload -U +X bashcompinit && bashcompinit\n${body}complete -F _opcat opcat\n`
    );
  return `# opcat completion for bash: source <(opcat completion bash)\n${body}complete -F _opcat opcat\n`;
}
