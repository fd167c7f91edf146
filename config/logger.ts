import pino, { type Logger } from 'pino';

export function createLogger(level: string, name = 'detflow'): Logger {
  return pino({ name, level, redact: ['req.headers.authorization', 'req.headers.cookie'] });
}
