import { z } from 'zod';
import { component } from './registry.ts';

const ROOM_KINDS = ['repository', 'branch'] as const;
export const RoomKindSchema = component(z.enum(ROOM_KINDS), 'RoomKind', 'Whether a room is the repository-wide room or one branch\'s room.');
export type RoomKind = z.infer<typeof RoomKindSchema>;

const ROOM_STATES = ['active', 'sealed'] as const;
export const RoomStateSchema = component(z.enum(ROOM_STATES), 'RoomState', 'An active room accepts appends; a sealed room stays readable and rejects appends with ROOM_SEALED.');
export type RoomState = z.infer<typeof RoomStateSchema>;

const SENDER_KINDS = ['user', 'bot'] as const;
export const SenderKindSchema = component(z.enum(SENDER_KINDS), 'SenderKind', 'Who authored a message.');
export type SenderKind = z.infer<typeof SenderKindSchema>;

const SUBJECT_KINDS = ['user', 'organization'] as const;
export const SubjectKindSchema = component(z.enum(SUBJECT_KINDS), 'SubjectKind', 'Kind of the subject whose authority allowed a bot action.');
export type SubjectKind = z.infer<typeof SubjectKindSchema>;

const MENTION_PRINCIPAL_KINDS = ['human', 'bot'] as const;
export const MentionPrincipalKindSchema = component(z.enum(MENTION_PRINCIPAL_KINDS), 'MentionPrincipalKind', 'Kind of a mentioned principal (and of an inbox owner).');
export type MentionPrincipalKind = z.infer<typeof MentionPrincipalKindSchema>;
