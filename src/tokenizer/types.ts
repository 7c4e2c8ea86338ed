// What the controller needs of a tokenizer: text <-> ids, and chat rendering to ids.

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface Tokenizer {
  readonly vocabSize: number;
  readonly eosTokenIds: number[];
  encode(text: string): number[];
  decode(ids: number[]): string;
  /** Renders messages through the model's chat template; with addGenerationPrompt the result ends where the assistant's reply begins. */
  renderChat(messages: ChatMessage[], options: { addGenerationPrompt: boolean }): string;
  /** renderChat, then encode (without adding special tokens twice). */
  encodeChat(messages: ChatMessage[], options: { addGenerationPrompt: boolean }): number[];
}
