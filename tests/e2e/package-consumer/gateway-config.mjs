// The gateway every consumer app mounts: one model group on the test's mock upstream (MOCK_URL).
export const config = {
  modelGroups: {
    'gpt-text': {
      deployments: [
        { provider: 'openai', model: 'text', baseURL: `${process.env.MOCK_URL}/v1`, apiKey: '${MOCK_UPSTREAM_KEY}' },
      ],
    },
  },
};

export const options = { masterKey: process.env.TORII_MASTER_KEY, environment: process.env };
