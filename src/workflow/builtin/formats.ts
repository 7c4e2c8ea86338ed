// Parsers for the answer formats the built-in prompts ask for, shared by environments.

/** The last ```python (or bare ```) fenced block, or null. */
export function extractPythonCode(text: string): string | null {
  const blocks = [...text.matchAll(/```[ \t]*(?:python3?|py)?[ \t]*\r?\n([\s\S]*?)```/gi)];
  const last = blocks[blocks.length - 1];
  return last ? last[1]!.replace(/\s+$/, '') + '\n' : null;
}

/**
 * The Tester's case: the fenced blocks after "Test Input:" and "Test Output:" (last occurrence of
 * each), or null when either is missing.
 */
export function extractTestCase(text: string): { input: string; output: string } | null {
  const block = (label: string): string | null => {
    const re = new RegExp(`${label}\\s*:?\\**\\s*\`\`\`[^\\n]*\\n([\\s\\S]*?)\`\`\``, 'gi');
    const all = [...text.matchAll(re)];
    const last = all[all.length - 1];
    return last ? last[1]! : null;
  };
  const input = block('Test Input');
  const output = block('Test Output');
  return input === null || output === null ? null : { input, output };
}

/** The text after the last "####" marker (the Reasoner's answer), trimmed, or null. */
export function extractHashAnswer(text: string): string | null {
  const k = text.lastIndexOf('####');
  if (k < 0) return null;
  const answer = text.slice(k + 4).trim().split('\n')[0]!.trim();
  return answer.length > 0 ? answer : null;
}
