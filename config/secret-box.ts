import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Encrypts secrets kept in the database (webhook secrets, target credentials) with AES-256-GCM.
 * The key is DETFLOW_SECRET_KEY (any string; it is stretched with SHA-256) or, on the embedded
 * default where nobody set one, a random key generated once into DATA_DIR/secret.key (mode 0600).
 */
export class SecretBox {
  private static readonly PREFIX = 'v1:';
  private constructor(private readonly key: Buffer) {}

  static fromPassphrase(passphrase: string): SecretBox {
    return new SecretBox(crypto.createHash('sha256').update(passphrase, 'utf8').digest());
  }

  static fromConfig(config: { secretKey: string | undefined; dataDir: string; databaseUrl?: string | undefined }): SecretBox {
    if (config.secretKey) return SecretBox.fromPassphrase(config.secretKey);
    if (config.databaseUrl) {
      // Several processes share a PostgreSQL database; a key file on one machine would not be shared.
      throw new Error('DETFLOW_SECRET_KEY: required when DATABASE_URL is set, so every process decrypts the same secrets');
    }
    const file = path.join(config.dataDir, 'secret.key');
    if (!fs.existsSync(file)) {
      fs.mkdirSync(config.dataDir, { recursive: true });
      fs.writeFileSync(file, crypto.randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    }
    return SecretBox.fromPassphrase(fs.readFileSync(file, 'utf8').trim());
  }

  seal(plaintext: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return SecretBox.PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  open(sealed: string): string {
    if (!sealed.startsWith(SecretBox.PREFIX)) throw new Error('Not a sealed secret');
    const raw = Buffer.from(sealed.slice(SecretBox.PREFIX.length), 'base64');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    try {
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('A stored secret cannot be decrypted: DETFLOW_SECRET_KEY differs from the key it was sealed with');
    }
  }
}
