/**
 * HLSL grammar for lockstep.
 *
 * Forked from tree-sitter-hlsl 0.2.0 (MIT, Stephan Seitz and the
 * tree-sitter-c/tree-sitter-cpp authors). It extends the tree-sitter-cpp
 * grammar; see README.md for what was changed relative to the fork source.
 */

const CPP = require('tree-sitter-cpp/grammar');

// Qualifiers that are only allowed *before* the type of a declaration
// (`groupshared float x;`, `out float4 c`, `triangle V v[3]`). They are kept
// out of the trailing-modifier position so that `float sample = 1;` lexes
// `sample` as an identifier.
const LEADING_QUALIFIERS = [
  'in',
  'out',
  'inout',
  'precise',
  'shared',
  'groupshared',
  'uniform',
  'globallycoherent',
  'reordercoherent',
  'export',
  'centroid',
  'noperspective',
  'nointerpolation',
  'sample',
  'linear',
  'center',
  'point',
  'line',
  'lineadj',
  'triangle',
  'triangleadj',
  'vertices',
  'indices',
  'primitives',
  'payload',
];

// Qualifiers that may also appear inside template arguments
// (`Texture2D<unorm float4>`, `StructuredBuffer<row_major float4x4>`).
const TYPE_QUALIFIERS = [
  'unorm',
  'snorm',
  'row_major',
  'column_major',
];

// HLSL keywords that are only keywords in declaration-modifier position and
// are otherwise ordinary identifiers (`int line = 2; sample += line;`).
const CONTEXTUAL_KEYWORDS = [
  'sample',
  'line',
  'lineadj',
  'point',
  'triangle',
  'triangleadj',
  'vertices',
  'indices',
  'primitives',
  'payload',
  'center',
  'centroid',
  'linear',
  'precise',
  'shared',
  'uniform',
  'noperspective',
];

module.exports = grammar(CPP, {
  name: 'lockstep_hlsl',

  // Conflicts that only existed for lambdas (removed below) are dropped so
  // that generation is warning-free.
  conflicts: ($, original) => original
    .filter((set) => !set.some((sym) => [
      '_lambda_capture',
      '_lambda_capture_identifier',
      'identifier_parameter_pack_expansion',
    ].includes(sym.name)))
    .concat([
      [$.function_declarator],
    ]),

  rules: {
    _top_level_item: ($, original) => choice(
      original,
      $.cbuffer_specifier,
    ),

    _block_item: ($, original) => choice(
      original,
      $.cbuffer_specifier,
    ),

    function_definition: ($, original) => seq(
      optional($._hlsl_attributes),
      original,
    ),

    function_declarator: ($, original) => seq(
      original,
      optional($.semantics),
    ),

    declaration: $ => seq(
      $._declaration_specifiers,
      commaSep1(choice(
        seq(field('declarator', $._declarator), optional($.semantics)),
        field('declarator', $.init_declarator),
      )),
      ';',
    ),

    field_declaration: $ => seq(
      $._declaration_specifiers,
      commaSep(seq(
        field('declarator', $._field_declarator),
        optional(choice(
          $.semantics,
          $.bitfield_clause,
          field('default_value', $.initializer_list),
          seq('=', field('default_value', choice($.expression, $.initializer_list))),
        )),
      )),
      optional($.attribute_specifier),
      ';',
    ),

    _declaration_specifiers: $ => prec.right(seq(
      repeat(choice($._declaration_modifiers, $.qualifiers)),
      field('type', $.type_specifier),
      repeat($._declaration_modifiers),
    )),

    parameter_declaration: ($, original) => seq(
      original,
      optional($.semantics),
    ),

    type_qualifier: ($, original) => choice(
      original,
      ...TYPE_QUALIFIERS,
    ),

    qualifiers: _ => choice(...LEADING_QUALIFIERS),

    // HLSL has no lambdas: dropping them frees `[` at statement start for
    // attributes.
    _expression_not_binary: ($, original) => choice(
      ...withoutSymbols(original, ['lambda_expression']),
      alias($._contextual_keyword, $.identifier),
    ),

    // HLSL has no structured bindings (`auto [a, b] = ...`).
    _declarator: ($, original) => choice(
      ...withoutSymbols(original, ['structured_binding_declarator']),
    ),

    _assignment_left_expression: ($, original) => choice(
      original,
      alias($._contextual_keyword, $.identifier),
    ),

    _contextual_keyword: _ => choice(...CONTEXTUAL_KEYWORDS),

    // `: SV_Position`, `: register(t0, space1)`, `: packoffset(c0.y)`
    // Wins over a bitfield clause whose width is a bare identifier.
    semantics: $ => prec(1, seq(
      ':',
      choice(
        field('name', $.identifier),
        $.register_binding,
        $.packoffset_binding,
      ),
    )),

    register_binding: $ => seq(
      'register',
      '(',
      field('slot', $.identifier),
      optional(seq(',', field('space', $.identifier))),
      ')',
    ),

    packoffset_binding: $ => seq(
      'packoffset',
      '(',
      field('offset', $.identifier),
      optional(seq('.', field('component', alias($.identifier, $.field_identifier)))),
      ')',
    ),

    _non_case_statement: ($, original) => choice(
      $.discard_statement,
      original,
    ),

    discard_statement: _ => seq('discard', ';'),

    // `cbuffer Name : register(b0) { float4 x; };` (also `tbuffer`)
    cbuffer_specifier: $ => prec.right(seq(
      field('kind', choice('cbuffer', 'tbuffer')),
      field('name', $.identifier),
      optional($.semantics),
      field('body', $.field_declaration_list),
      optional(';'),
    )),

    // `[numthreads(8, 8, 1)]`, `[unroll]`, `[WaveSize(32)]`
    hlsl_attribute: $ => prec(1, seq(
      '[',
      field('name', $.identifier),
      optional(field('arguments', $.argument_list)),
      ']',
    )),

    _hlsl_attributes: $ => repeat1($.hlsl_attribute),

    if_statement: ($, original) => seq(optional($._hlsl_attributes), original),
    for_statement: ($, original) => seq(optional($._hlsl_attributes), original),
    while_statement: ($, original) => seq(optional($._hlsl_attributes), original),
    do_statement: ($, original) => seq(optional($._hlsl_attributes), original),
    switch_statement: ($, original) => seq(optional($._hlsl_attributes), original),
  },
});

/**
 * Flattens a CHOICE rule and drops the members that are the named symbols.
 */
function withoutSymbols(rule, names) {
  const out = [];
  const visit = (r) => {
    if (r.type === 'CHOICE') {
      r.members.forEach(visit);
    } else if (!(r.type === 'SYMBOL' && names.includes(r.name))) {
      out.push(r);
    }
  };
  visit(rule);
  return out;
}

function commaSep(rule) {
  return optional(commaSep1(rule));
}

function commaSep1(rule) {
  return seq(rule, repeat(seq(',', rule)));
}
