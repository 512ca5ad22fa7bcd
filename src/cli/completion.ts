/**
 * `opcat completion bash|zsh|fish`: shell completion of commands, subcommands and flags, generated
 * from the command tree itself (so it never falls behind the CLI).
 */
import type { Command } from "commander";

interface Node {
  path: string[];
  subs: string[];
  flags: string[];
}

function walk(cmd: Command, path: string[] = [], out: Node[] = []): Node[] {
  const flags = cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x)));
  out.push({ path, subs: cmd.commands.map((c) => c.name()), flags: [...flags, "--help"] });
  for (const c of cmd.commands) walk(c, [...path, c.name()], out);
  return out;
}

export function completionScript(program: Command, shell: "bash" | "zsh" | "fish"): string {
  const nodes = walk(program);
  if (shell === "fish") {
    const lines = ["# opcat completion for fish: opcat completion fish | source"];
    for (const n of nodes) {
      const cond =
        n.path.length === 0 ? "__fish_use_subcommand" : `__fish_seen_subcommand_from ${n.path[n.path.length - 1]}`;
      for (const s of n.subs) lines.push(`complete -c opcat -f -n '${cond}' -a '${s}'`);
      for (const f of n.flags.filter((x) => x.startsWith("--")))
        lines.push(`complete -c opcat -n '${cond}' -l '${f.slice(2)}'`);
    }
    return lines.join("\n") + "\n";
  }
  const cases = nodes
    .map((n) => `    "${n.path.join(" ")}") words="${[...n.subs, ...n.flags].join(" ")}" ;;`)
    .join("\n");
  const body = `_opcat() {
  local cur path="" w i
  cur="\${COMP_WORDS[COMP_CWORD]}"
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
${cases}
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
