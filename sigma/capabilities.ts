import type { SigmaDocument } from './model';
import { hasWildcards } from './string';
import { conditionNodes, documentItems, flatValues } from './walk';

/** Which Sigma features a document uses; backends and portability checks key off these. */
export interface Capabilities {
  keywords: boolean;
  wildcards: boolean;
  regex: boolean;
  regexFlags: boolean;
  cidr: boolean;
  base64: boolean;
  base64offset: boolean;
  utf16: boolean;
  windash: boolean;
  expand: boolean;
  fieldref: boolean;
  exists: boolean;
  cased: boolean;
  neq: boolean;
  numericCompare: boolean;
  timeParts: boolean;
  nullValue: boolean;
  allModifier: boolean;
  numbers: boolean;
  booleans: boolean;
  listOfMaps: boolean;
  not: boolean;
  oneOf: boolean;
  allOf: boolean;
  them: boolean;
  conditionList: boolean;
  nestedFields: boolean;
  correlation: boolean;
  filter: boolean;
}

export function capabilitiesOf(doc: SigmaDocument): Capabilities {
  const caps: Capabilities = {
    keywords: false,
    wildcards: false,
    regex: false,
    regexFlags: false,
    cidr: false,
    base64: false,
    base64offset: false,
    utf16: false,
    windash: false,
    expand: false,
    fieldref: false,
    exists: false,
    cased: false,
    neq: false,
    numericCompare: false,
    timeParts: false,
    nullValue: false,
    allModifier: false,
    numbers: false,
    booleans: false,
    listOfMaps: false,
    not: false,
    oneOf: false,
    allOf: false,
    them: false,
    conditionList: false,
    nestedFields: false,
    correlation: doc.kind === 'correlation',
    filter: doc.kind === 'filter',
  };
  if (doc.kind === 'correlation') return caps;
  for (const { item } of documentItems(doc)) {
    const mods = new Set(item.modifiers);
    if (item.field === null) caps.keywords = true;
    else if (item.field.includes('.')) caps.nestedFields = true;
    if (mods.has('i') || mods.has('m') || mods.has('s') || mods.has('ignorecase') || mods.has('multiline') || mods.has('dotall')) caps.regexFlags = true;
    if (mods.has('base64')) caps.base64 = true;
    if (mods.has('base64offset')) caps.base64offset = true;
    if (mods.has('wide') || mods.has('utf16le') || mods.has('utf16be') || mods.has('utf16')) caps.utf16 = true;
    if (mods.has('windash')) caps.windash = true;
    if (mods.has('all')) caps.allModifier = true;
    if (mods.has('cased')) caps.cased = true;
    if (item.negated) caps.neq = true;
    for (const v of flatValues(item.values)) {
      switch (v.kind) {
        case 'string':
          if (hasWildcards(v.parts)) caps.wildcards = true;
          break;
        case 'regex':
          caps.regex = true;
          break;
        case 'cidr':
          caps.cidr = true;
          break;
        case 'placeholder':
          caps.expand = true;
          break;
        case 'fieldref':
          caps.fieldref = true;
          break;
        case 'exists':
          caps.exists = true;
          break;
        case 'compare':
          caps.numericCompare = true;
          break;
        case 'timepart':
          caps.timeParts = true;
          break;
        case 'null':
          caps.nullValue = true;
          break;
        case 'number':
          caps.numbers = true;
          break;
        case 'boolean':
          caps.booleans = true;
          break;
        default:
          break;
      }
    }
  }
  for (const ident of doc.detection.identifiers.values()) {
    if (ident.node.kind === 'or' && ident.node.children.length > 1) caps.listOfMaps = true;
  }
  caps.conditionList = doc.detection.conditions.length > 1;
  for (const c of doc.detection.conditions) {
    for (const n of conditionNodes(c.ast)) {
      if (n.kind === 'not') caps.not = true;
      if (n.kind === 'of') {
        if (n.quantifier === 'all') caps.allOf = true;
        else caps.oneOf = true;
        if (n.them) caps.them = true;
      }
    }
  }
  return caps;
}
