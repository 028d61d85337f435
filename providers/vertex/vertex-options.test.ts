import { describe, expect, it } from 'vitest';
import { validateVertexGeminiOptions } from './vertex-gemini-request.ts';
import { validateVertexOptions } from './vertex-options.ts';
import { parseServiceAccount, pkcs8FromPem } from './vertex-service-account.ts';
import { vertexHost, vertexModelUrl } from './vertex-url.ts';
import { vertexTestTarget } from '../../tests/support/vertex-test-support.ts';

const pem = `-----BEGIN PRIVATE KEY-----\n${btoa('some key bytes')}\n-----END PRIVATE KEY-----\n`;
const account = {
  type: 'service_account',
  client_email: 'gateway@my-project.iam.gserviceaccount.com',
  private_key: pem,
  private_key_id: 'abc',
  token_uri: 'https://oauth2.googleapis.com/token',
};

describe('validateVertexOptions', () => {
  it('accepts a project, a location and one credential', () => {
    expect(validateVertexOptions({ project: 'my-project', location: 'us-central1', serviceAccount: account })).toEqual(
      [],
    );
    expect(validateVertexOptions({ project: 'my-project', location: 'global', accessToken: 'ya29.x' })).toEqual([]);
    expect(validateVertexOptions({ project: 'my-project', location: 'eu' })).toEqual([]);
  });

  it('names a missing project or location, and a location that could change the host', () => {
    expect(validateVertexOptions({ location: 'us-central1' })).toEqual([expect.stringMatching(/^project: /)]);
    expect(validateVertexOptions({ project: 'my-project' })).toEqual([expect.stringMatching(/^location: /)]);
    expect(validateVertexOptions({ project: 'my-project', location: 'evil.example.com/x' })).toEqual([
      expect.stringMatching(/^location: /),
    ]);
    expect(validateVertexOptions({ project: '../other', location: 'us-central1' })).toEqual([
      expect.stringMatching(/^project: /),
    ]);
  });

  it('refuses both credentials at once, a broken key file, and bad labels, without quoting the key', () => {
    const both = validateVertexOptions({
      project: 'p1',
      location: 'us-central1',
      serviceAccount: account,
      accessToken: 'ya29.x',
    });
    expect(both).toEqual([expect.stringMatching(/^serviceAccount: set either/)]);

    const rsaKey = { ...account, private_key: '-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----' };
    const broken = validateVertexOptions({ project: 'p1', location: 'us-central1', serviceAccount: rsaKey });
    expect(broken).toEqual([expect.stringMatching(/^serviceAccount: private_key is not a PKCS#8 PEM key/)]);
    expect(broken.join()).not.toContain('MIIE');

    expect(validateVertexOptions({ project: 'p1', location: 'us-central1', serviceAccount: '{not json' })).toEqual([
      expect.stringMatching(/^serviceAccount: is not valid JSON/),
    ]);
    expect(validateVertexOptions({ project: 'p1', location: 'us-central1', labels: { Team: 'x' } })).toEqual([
      expect.stringMatching(/^labels\.Team: /),
    ]);
  });

  it('checks the Gemini body options too on the Gemini translator', () => {
    expect(validateVertexGeminiOptions({ project: 'p1', location: 'us-central1', thinkingControl: 'tokens' })).toEqual([
      expect.stringMatching(/^thinkingControl: /),
    ]);
  });
});

describe('parseServiceAccount', () => {
  it('reads the JSON text of a key file, defaulting token_uri to Google’s', () => {
    const { token_uri: _tokenUri, ...withoutTokenUri } = account;
    const parsed = parseServiceAccount(JSON.stringify(withoutTokenUri));
    expect(parsed).toEqual({
      ok: true,
      account: {
        clientEmail: account.client_email,
        privateKey: pem,
        privateKeyId: 'abc',
        tokenUri: 'https://oauth2.googleapis.com/token',
      },
    });
  });

  it('names missing fields only', () => {
    expect(parseServiceAccount({ private_key: pem })).toEqual({
      ok: false,
      problem: 'is not a service-account key: missing or invalid client_email',
    });
    expect(parseServiceAccount({ ...account, type: 'authorized_user' })).toMatchObject({ ok: false });
  });

  it('decodes a PEM whose newlines were escaped in an environment variable', () => {
    expect(pkcs8FromPem(pem.replace(/\n/g, '\\n'))).toEqual(new TextEncoder().encode('some key bytes'));
    expect(pkcs8FromPem('not a pem')).toBeUndefined();
  });
});

describe('vertex URLs', () => {
  it('picks the host by location', () => {
    expect(vertexHost('us-central1')).toBe('https://us-central1-aiplatform.googleapis.com');
    expect(vertexHost('global')).toBe('https://aiplatform.googleapis.com');
    expect(vertexHost('us')).toBe('https://aiplatform.us.rep.googleapis.com');
    expect(vertexHost('eu')).toBe('https://aiplatform.eu.rep.googleapis.com');
  });

  it('encodes the model as one path segment, keeping Claude’s @version', () => {
    const target = vertexTestTarget('claude-haiku-4-5@20251001', { location: 'us-east5' });
    expect(vertexModelUrl(target, { project: 'my-project', location: 'us-east5' }, 'anthropic', 'rawPredict')).toBe(
      'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5@20251001:rawPredict',
    );
    const odd = vertexTestTarget('a/b?c');
    expect(vertexModelUrl(odd, { project: 'p1', location: 'us-central1' }, 'google', 'predict')).toMatch(
      /\/models\/a%2Fb%3Fc:predict$/,
    );
  });
});
