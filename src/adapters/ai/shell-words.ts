// Splits one command line into words the way bash does for a *simple command*, and nothing more:
// single quotes, double quotes, backslashes, comments, leading `NAME=value` assignments and output
// redirections. There is no shell behind it, so every construct that would make bash do something this
// parser cannot (pipes, lists, substitutions, globs, input redirection, subshells) is refused with a
// message naming it — a command is never run with a meaning other than the one bash would give it.

/** Where an output descriptor goes: a workspace file (`>` truncates, `>>` appends), or a copy of fd 1. */
export type Redirect = { fd: 1 | 2; append: boolean; target: string } | { fd: 2; toStdout: true };

export interface SimpleCommand {
  /** `NAME=value` words before the program name (the program's environment). */
  assignments: Record<string, string>;
  argv: string[];
  redirects: Redirect[];
}

/** `command` is undefined for a line with nothing to run (blank, or only a comment). */
export type ParseResult = { ok: true; command: SimpleCommand | undefined } | { ok: false; message: string };

interface Word {
  text: string;
  /** Set when the word starts with an unquoted `NAME=`: the name. */
  assign?: string;
}
type Token = { word: Word } | { op: string };

const NO_SHELL = "commands run one program each, without a shell";
const OPERATORS = ["&&", "||", ";;", ">>", "&>", ">&", "<<", "|", "&", ";", "<", ">", "(", ")"];
const WHAT: Record<string, string> = {
  "|": "a pipe ('|')",
  "||": "'||'",
  "&&": "'&&'",
  "&": "a background job ('&')",
  ";": "a command list (';')",
  ";;": "';;'",
  "\n": "several commands on separate lines",
  "<": "input redirection ('<')",
  "<<": "a here-document ('<<')",
  "(": "a subshell or grouping ('(')",
  ")": "')'",
  "&>": "'&>' (use '> file 2>&1')",
};
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function refused(what: string): { ok: false; message: string } {
  return {
    ok: false,
    message: `${what} is not supported: ${NO_SHELL}. Run the steps as separate commands, or do the work in one python or node program.`,
  };
}

export function parseCommandLine(line: string): ParseResult {
  const lexed = tokenize(line);
  if ("message" in lexed) return lexed;
  const tokens = lexed.tokens;
  // A trailing newline (or several) is what a model often sends; a newline *between* commands is a list.
  while (tokens.length > 0 && isOp(tokens[tokens.length - 1], "\n")) tokens.pop();
  // No prototype: `__proto__=x` is a variable like any other.
  const command: SimpleCommand = {
    assignments: Object.create(null) as Record<string, string>,
    argv: [],
    redirects: [],
  };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if ("word" in token) {
      const { text, assign } = token.word;
      if (command.argv.length === 0 && command.redirects.length === 0 && assign !== undefined) {
        command.assignments[assign] = text.slice(assign.length + 1);
      } else command.argv.push(text);
      continue;
    }
    // `2>` / `1>`: a descriptor number written right before the operator was lexed as its own word.
    let fd: 1 | 2 = 1;
    if (token.op.startsWith("2") || token.op.startsWith("1")) fd = token.op.startsWith("2") ? 2 : 1;
    const op = token.op.replace(/^[12]/, "");
    if (op === ">&") {
      const next = tokens[++i];
      if (fd === 2 && next && "word" in next && next.word.text === "1") {
        command.redirects.push({ fd: 2, toStdout: true });
        continue;
      }
      return refused("descriptor duplication other than '2>&1'");
    }
    if (op === ">" || op === ">>") {
      const next = tokens[++i];
      if (!next || !("word" in next))
        return { ok: false, message: `syntax error near '${op}': a file name must follow` };
      command.redirects.push({ fd, append: op === ">>", target: next.word.text });
      continue;
    }
    return refused(WHAT[op] ?? `'${op}'`);
  }
  if (command.argv.length === 0) {
    if (Object.keys(command.assignments).length > 0) {
      return refused("setting a variable for later commands");
    }
    if (command.redirects.length > 0) return refused("a redirection without a command");
    return { ok: true, command: undefined };
  }
  return { ok: true, command };
}

function isOp(token: Token | undefined, op: string): boolean {
  return token !== undefined && "op" in token && token.op === op;
}

function tokenize(line: string): { tokens: Token[] } | { ok: false; message: string } {
  const tokens: Token[] = [];
  let text: string | undefined; // the word being built; undefined between words
  let unquotedSoFar = true; // every character of the word so far was unquoted (for NAME=)
  let assign: string | undefined;
  let braces = { open: false, close: false };
  const end = (): void => {
    if (text === undefined) return;
    tokens.push({ word: assign === undefined ? { text } : { text, assign } });
    text = undefined;
    unquotedSoFar = true;
    assign = undefined;
    braces = { open: false, close: false };
  };
  const add = (s: string, quoted: boolean): void => {
    text = (text ?? "") + s;
    if (quoted) unquotedSoFar = false;
  };
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (c === " " || c === "\t") {
      end();
      i++;
    } else if (c === "\n") {
      end();
      tokens.push({ op: "\n" });
      i++;
    } else if (c === "#" && text === undefined) {
      while (i < line.length && line[i] !== "\n") i++;
    } else if (c === "\\") {
      if (i + 1 >= line.length) return refused("a trailing backslash (line continuation)");
      if (line[i + 1] !== "\n") add(line[i + 1]!, true);
      i += 2;
    } else if (c === "'") {
      const close = line.indexOf("'", i + 1);
      if (close < 0) return { ok: false, message: "unexpected end of line while looking for the matching `''" };
      add(line.slice(i + 1, close), true);
      i = close + 1;
    } else if (c === '"') {
      let j = i + 1;
      let part = "";
      for (;;) {
        if (j >= line.length)
          return { ok: false, message: "unexpected end of line while looking for the matching `\"'" };
        const d = line[j]!;
        if (d === '"') break;
        if (d === "\\" && j + 1 < line.length && '$`"\\\n'.includes(line[j + 1]!)) {
          if (line[j + 1] !== "\n") part += line[j + 1];
          j += 2;
          continue;
        }
        const expansion = expansionAt(line, j, true);
        if (expansion) return refused(expansion);
        part += d;
        j++;
      }
      add(part, true);
      i = j + 1;
    } else if ("|&;<>()".includes(c)) {
      const op = OPERATORS.find((o) => line.startsWith(o, i))!;
      // `2>` and `1>`: a lone unquoted digit directly before `>` names the descriptor.
      if ((text === "1" || text === "2") && unquotedSoFar && op.startsWith(">")) {
        tokens.push({ op: text + op });
        text = undefined;
        assign = undefined;
      } else {
        end();
        tokens.push({ op });
      }
      i += op.length;
    } else {
      const expansion = expansionAt(line, i);
      if (expansion) return refused(expansion);
      if ("*?[".includes(c)) return refused(`a glob ('${c}', expanded by a shell)`);
      if (c === "~" && text === undefined) return refused("'~' (home directory expansion)");
      if (c === "{") braces.open = true;
      if (c === "}") braces.close = true;
      if (braces.open && braces.close) return refused("brace expansion ('{…}')");
      if (c === "=" && unquotedSoFar && assign === undefined && text !== undefined && NAME.test(text)) assign = text;
      add(c, false);
      i++;
    }
  }
  end();
  return { tokens };
}

/** What a `$` or backquote at `i` would make bash expand, or undefined when it is a literal character. */
function expansionAt(line: string, i: number, quoted = false): string | undefined {
  const c = line[i];
  if (c === "`") return "command substitution ('`…`')";
  if (c !== "$") return undefined;
  const next = line[i + 1];
  if (next === undefined) return undefined;
  if (next === "(") return "command substitution ('$(…)')";
  if (next === "'" && !quoted) return "ANSI-C quoting ($'…')";
  if (next === '"' && !quoted) return 'locale quoting ($"…")';
  if (next === "{" || /[A-Za-z0-9_@*#?$!-]/.test(next)) return "variable expansion ('$')";
  return undefined;
}
