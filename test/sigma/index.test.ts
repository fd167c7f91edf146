import * as sigma from '../../sigma';

describe('public entry point sigma/index.ts', () => {
  const text = `title: Whoami
id: 0f5d8b7e-1a2b-4c3d-9e8f-001122334455
status: test
author: detflow
date: 2024-01-01
description: Detects whoami started from a command shell
tags:
    - attack.discovery
    - attack.t1033
logsource:
    category: process_creation
    product: windows
detection:
    selection:
        Image|endswith: '\\whoami.exe'
        ParentImage|endswith: '\\cmd.exe'
    condition: selection
level: low
`;

  it('parses, evaluates, lints and converts through the exported API', () => {
    const rule = sigma.parseRule(text);
    const { match } = sigma.compileRule(rule);
    expect(match({ Image: 'C:\\Windows\\System32\\WHOAMI.EXE', ParentImage: 'C:\\Windows\\System32\\cmd.exe' })).toBe(true);
    expect(sigma.lintText(text).counts).toEqual({ error: 0, warning: 0, info: 0 });
    expect(sigma.toSplunk(rule)).toBe('Image="*\\\\whoami.exe" ParentImage="*\\\\cmd.exe"');
    expect(sigma.portability(rule).score).toBe(1);
    expect(sigma.capabilitiesOf(rule).wildcards).toBe(true);
    expect(sigma.MODIFIERS.size).toBeGreaterThan(30);
    expect(sigma.ATTACK_TACTICS).toContain('stealth');
  });

  it('exposes SigmaError with a stable code and position', () => {
    try {
      sigma.parseRule(text.replace('condition: selection', 'condition: selection and nope'));
      throw new Error('unreachable');
    } catch (e) {
      expect(sigma.isSigmaError(e)).toBe(true);
      expect(e).toMatchObject({ code: 'condition-undefined-identifier', line: 17, column: 30 });
    }
  });
});
