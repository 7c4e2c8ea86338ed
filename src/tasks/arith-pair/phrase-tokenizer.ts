// The study's tokenizer: characters plus whole phrases. The pair workflow's prompts, the maths
// environment's feedback, the role conditions and the PAC templates are long fixed English texts;
// one id per character would make every teacher context hundreds of tokens long, more than two
// CPU cores can train on in minutes. Here each fixed text fragment is one token (as a BPE vocabulary
// trained on these prompts would merge them), and everything else (problems, numbers, programs) is
// spelt out character by character. Encoding is greedy longest match, so the same text always
// gives the same ids; decoding concatenates pieces. Chat format as CharTokenizer's.
import { decodePieces, DEFAULT_ALPHABET, renderSpecialChat, SPECIAL_TOKENS, specialTokenAt } from '../../tokenizer/char-tokenizer.ts';
import type { ChatMessage, Tokenizer } from '../../tokenizer/types.ts';

export class PhraseTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosTokenIds: number[];
  private readonly pieces: string[];
  private readonly idOf = new Map<string, number>();
  /** Phrases by first character, longest first. */
  private readonly byFirst = new Map<string, string[]>();

  constructor(phrases: readonly string[], alphabet: string = DEFAULT_ALPHABET) {
    this.pieces = [...SPECIAL_TOKENS];
    const add = (piece: string) => {
      if (this.idOf.has(piece)) return;
      this.idOf.set(piece, this.pieces.length);
      this.pieces.push(piece);
    };
    for (const ch of Array.from(alphabet)) add(ch);
    for (const p of [...new Set(phrases)].filter((p) => p.length > 1).sort()) add(p);
    for (const p of this.pieces.slice(SPECIAL_TOKENS.length)) {
      if (p.length < 2) continue;
      const list = this.byFirst.get(p[0]!) ?? [];
      list.push(p);
      this.byFirst.set(p[0]!, list);
    }
    for (const list of this.byFirst.values()) list.sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
    this.vocabSize = this.pieces.length;
    this.eosTokenIds = [SPECIAL_TOKENS.indexOf('<|end|>'), SPECIAL_TOKENS.indexOf('<eos>')];
  }

  encode(text: string): number[] {
    const ids: number[] = [];
    const unk = SPECIAL_TOKENS.indexOf('<unk>');
    let i = 0;
    outer: while (i < text.length) {
      const s = specialTokenAt(text, i);
      if (s >= 0) {
        ids.push(s);
        i += SPECIAL_TOKENS[s]!.length;
        continue;
      }
      for (const p of this.byFirst.get(text[i]!) ?? []) {
        if (text.startsWith(p, i)) {
          ids.push(this.idOf.get(p)!);
          i += p.length;
          continue outer;
        }
      }
      const ch = String.fromCodePoint(text.codePointAt(i)!);
      ids.push(this.idOf.get(ch) ?? unk);
      i += ch.length;
    }
    return ids;
  }

  decode(ids: number[]): string {
    return decodePieces(this.pieces, ids, 'PhraseTokenizer');
  }

  renderChat(messages: ChatMessage[], options: { addGenerationPrompt: boolean }): string {
    return renderSpecialChat(messages, options);
  }

  encodeChat(messages: ChatMessage[], options: { addGenerationPrompt: boolean }): number[] {
    return this.encode(this.renderChat(messages, options));
  }
}

/** The fixed fragments of a template: render it with `\u0001` in every variable slot and split there. */
export function fragments(rendered: string): string[] {
  return rendered.split('\u0001').filter((f) => f.length > 1);
}
