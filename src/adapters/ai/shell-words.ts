// Splits one command line into words the way bash does for a *simple command*, and nothing more:
// single quotes, double quotes, backslashes, comments, leading `NAME=value` assignments and output
// redirections of descriptors 1 and 2. There is no shell behind it, so every construct that would make
// bash do something this parser cannot (pipes, lists, substitutions and arithmetic, globs, tilde and
// brace expansion, input redirection, other descriptors, keywords such as `!`, `if` or `time`,
// subshells) is refused with a message naming it — a command is never run with a meaning other than
// the one bash would give it (test/adapters/ai/shell-words.test.ts runs the lines it accepts under
// bash and compares).

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
  /** Set when the word starts with an unquoted `NAME=` (or `NAME+=`): the name. */
  assign?: string;
  /** `NAME+=`: bash appends to the variable. */
  append?: boolean;
  /** No character of the word was quoted or escaped (so it can be a keyword). */
  plain: boolean;
}
/** An operator; `fd`: the unquoted digits written right before a redirection (`2>`, `3>`). */
type Token = { word: Word } | { op: string; fd?: string };

const NO_SHELL = "commands run one program each, without a shell";
// Longest first: the first that matches is the operator.
const OPERATORS = "&>> <<< && || ;; >> >| &> >& << <& <> |& | & ; < > ( )".split(" ");
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
  "<<<": "a here-string ('<<<')",
  "<&": "input redirection ('<&')",
  "<>": "input redirection ('<>')",
  "|&": "a pipe ('|&')",
  "&>>": "'&>>' (use '>> file 2>&1')",
  "(": "a subshell or grouping ('(')",
  ")": "')'",
  "&>": "'&>' (use '> file 2>&1')",
};
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Bash's reserved words: special only as the first word of a command, and only unquoted. */
const KEYWORDS = new Set(
  "! { } [[ ]] if then else elif fi case esac for select while until do done in function time coproc".split(" "),
);

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
      const { text, assign, append, plain } = token.word;
      if (i === 0 && plain && KEYWORDS.has(text)) return refused(`the shell keyword '${text}'`);
      // Assignments may follow redirections; the first other word is the program.
      if (command.argv.length === 0 && assign !== undefined) {
        if (append) return refused("appending to a variable ('+=')");
        command.assignments[assign] = text.slice(assign.length + 1);
      } else command.argv.push(text);
      continue;
    }
    const { op } = token;
    if (op === ">" || op === ">>" || op === ">|" || op === ">&") {
      const fd = token.fd ?? "1";
      if (fd !== "1" && fd !== "2") {
        return refused(`redirecting descriptor ${fd} (only 1, standard output, and 2, standard error, can be)`);
      }
      const next = tokens[++i];
      if (op === ">&") {
        if (fd === "2" && next && "word" in next && next.word.text === "1") {
          command.redirects.push({ fd: 2, toStdout: true });
          continue;
        }
        return refused("descriptor duplication other than '2>&1'");
      }
      if (!next || !("word" in next))
        return { ok: false, message: `syntax error near '${op}': a file name must follow` };
      // `>|` overrides bash's noclobber, which is off: the same as `>`.
      command.redirects.push({ fd: fd === "2" ? 2 : 1, append: op === ">>", target: next.word.text });
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
  let append = false;
  let braces = { open: false, close: false };
  const reset = (): void => {
    text = undefined;
    unquotedSoFar = true;
    assign = undefined;
    append = false;
    braces = { open: false, close: false };
  };
  const end = (): void => {
    if (text === undefined) return;
    const word: Word = { text, plain: unquotedSoFar };
    if (assign !== undefined) Object.assign(word, { assign }, append ? { append } : {});
    tokens.push({ word });
    reset();
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
      // `2>`, `3>`, `10<`: unquoted digits directly before a redirection name the descriptor.
      if (text !== undefined && unquotedSoFar && /^[0-9]+$/.test(text) && "<>".includes(op[0]!)) {
        tokens.push({ op, fd: text });
        reset();
      } else {
        end();
        tokens.push({ op });
      }
      i += op.length;
    } else {
      const expansion = expansionAt(line, i);
      if (expansion) return refused(expansion);
      // `[` opens a pattern only when a `]` follows in the word (`[[` and `[ -f x ]`'s `[` are words).
      const bracket = c === "[" && /^[^\s|&;<>()]*\]/.test(line.slice(i + 1));
      if (c === "*" || c === "?" || bracket) return refused(`a glob ('${c}', expanded by a shell)`);
      // `~` starts a word, or follows the `=` of a NAME= word or a `:` in it (bash expands those
      // in arguments too: `echo a=~/x`).
      const tilde = text === undefined || (assign !== undefined && "=:".includes(line[i - 1]!));
      if (c === "~" && tilde) return refused("'~' (home directory expansion)");
      if (c === "{") braces.open = true;
      if (c === "}") braces.close = true;
      if (braces.open && braces.close) return refused("brace expansion ('{…}')");
      if (c === "=" && unquotedSoFar && assign === undefined && text !== undefined) {
        if (NAME.test(text)) assign = text;
        else if (text.endsWith("+") && NAME.test(text.slice(0, -1))) [assign, append] = [text.slice(0, -1), true];
      }
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
  if (next === "(") {
    return line[i + 2] === "(" ? "arithmetic expansion ('$((…))')" : "command substitution ('$(…)')";
  }
  if (next === "[") return "arithmetic expansion ('$[…]')";
  if (next === "'" && !quoted) return "ANSI-C quoting ($'…')";
  if (next === '"' && !quoted) return 'locale quoting ($"…")';
  if (next === "{" || /[A-Za-z0-9_@*#?$!-]/.test(next)) return "variable expansion ('$')";
  return undefined;
}
