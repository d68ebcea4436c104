// The starter agents (docs/templates.md): three complete agents a new organization can create in one request and
// call at once, each with test values for its variables and a scripted model that walks its graph offline. The
// scripts' `prompt` keys are phrases of the node prompts below (the scripted model matches the node by them), and
// their lines use the test values, since a script is not rendered with the call's variables.

/** One step of the scripted model (voice_agent.llm.script), as the agent's settings take it. */
export type StarterScriptStep = {
  user?: string;
  prompt?: string;
  after?: "caller" | "agent";
  say?: string;
  call?: { name: string; arguments?: Record<string, unknown> };
};

export type StarterAgent = {
  id: string;
  name: string;
  description: string;
  direction: "outbound" | "inbound";
  definition: { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[]; tools?: Record<string, unknown>[] };
  variables: Record<string, string>;
  dispositions: string[];
  script: StarterScriptStep[];
  /** Caller lines that walk the main path on the scripted model. */
  sample: string[];
  /** What the operator must change before real calls: a JSON path in the definition, and why. */
  change: { path: string; description: string }[];
};

const edge = (id: string, source: string, target: string, label: string, condition: string, on?: "no_answer") => ({
  id,
  source,
  target,
  data: { label, condition, ...(on ? { on } : {}) },
});

// ---- Lead qualification, handed to sales by a warm transfer -----------------------------------------------------

const LEAD = { open: "find out whether they have a minute", qualify: "Qualify the lead", later: "Offer a follow-up", stop: "Respect their answer" };

const lead: StarterAgent = {
  id: "lead-qualification",
  name: "Lead qualification",
  description:
    "Outbound: asks whether the lead has a minute, qualifies them on timeline and budget, and hands a qualified lead to a sales specialist with a warm transfer (the specialist hears a summary first); otherwise offers a follow-up.",
  direction: "outbound",
  definition: {
    nodes: [
      {
        id: "start",
        type: "startCall",
        data: {
          greeting: "Hi {{first_name}}, this is Sam from {{company_name}}. I'm calling about {{product}}. Do you have a minute?",
          prompt: `You are Sam, a friendly sales development representative at {{company_name}}. Briefly ${LEAD.open} to talk about {{product}}. Keep every reply to one or two short sentences.`,
        },
      },
      {
        id: "qualify",
        type: "agentNode",
        data: {
          prompt: `${LEAD.qualify}: ask when {{first_name}} would like to start with {{product}} and whether they have a budget in mind. Ask one question at a time.`,
          extraction_variables: [
            { name: "timeline", type: "string", prompt: "When they would like to start" },
            { name: "budget", type: "string", prompt: "The budget they mentioned, if any" },
          ],
        },
      },
      {
        id: "sales",
        type: "transferCall",
        data: {
          destination: "+14155550188",
          mode: "warm",
          message: "Great, let me connect you with one of our specialists now. Please hold for a moment.",
          whisper_prompt: "Tell the specialist who the lead is, what they want and their timeline and budget, in two sentences.",
          timeout_seconds: 30,
        },
      },
      {
        id: "follow_up",
        type: "endCall",
        data: { prompt: `${LEAD.later}: say a specialist will email {{first_name}} with details, thank them and say goodbye.` },
      },
      { id: "not_interested", type: "endCall", data: { prompt: `${LEAD.stop}: apologise for the interruption, thank them and say goodbye.` } },
    ],
    edges: [
      edge("e1", "start", "qualify", "interested", "They have a minute or want to hear more"),
      edge("e2", "start", "not_interested", "not_interested", "They are not interested or it is a bad time"),
      edge("e3", "qualify", "sales", "qualified", "They want to start within the next six months"),
      edge("e4", "qualify", "follow_up", "not_ready", "They are not ready to start yet"),
      edge("e5", "sales", "follow_up", "no_answer", "No specialist answered", "no_answer"),
    ],
  },
  variables: { first_name: "Alex", company_name: "Northwind Solar", product: "rooftop solar panels" },
  dispositions: ["qualified", "follow_up", "not_interested"],
  script: [
    { prompt: LEAD.open, after: "caller", user: "not interested", call: { name: "not_interested" } },
    { prompt: LEAD.open, after: "caller", user: "busy", call: { name: "not_interested" } },
    { prompt: LEAD.open, after: "caller", say: "Great, thanks!", call: { name: "interested" } },
    { prompt: LEAD.qualify, after: "agent", say: "When would you like to get started, and do you have a budget in mind?" },
    {
      prompt: LEAD.qualify,
      after: "caller",
      user: "this month",
      say: "That sounds like a great fit.",
      call: { name: "qualified", arguments: { timeline: "this month", budget: "about ten thousand dollars" } },
    },
    { prompt: LEAD.qualify, after: "caller", user: "next year", say: "Understood.", call: { name: "not_ready", arguments: { timeline: "next year" } } },
    { prompt: LEAD.qualify, after: "caller", user: "not yet", say: "Understood.", call: { name: "not_ready" } },
    { prompt: LEAD.qualify, after: "caller", say: "Thanks. That sounds like a good fit.", call: { name: "qualified" } },
    {
      prompt: LEAD.later,
      say: "A specialist will email you the details. Thank you for your time, goodbye!",
      call: { name: "end_call", arguments: { disposition: "follow_up" } },
    },
    {
      prompt: LEAD.stop,
      say: "Sorry to have bothered you. Thank you, and goodbye!",
      call: { name: "end_call", arguments: { disposition: "not_interested" } },
    },
  ],
  sample: ["Sure, tell me more.", "We want to start this month, with a budget of about ten thousand dollars."],
  change: [{ path: "nodes[sales].data.destination", description: "Your sales team's phone number (E.164): +14155550188 is a placeholder that reaches nobody" }],
};

// ---- Appointment booking through an HTTP tool --------------------------------------------------------------------

const BOOK = { open: "Offer to schedule", ask: "Book the appointment", done: "Confirm the booking", declined: "They do not want to book" };
const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"];

const booking: StarterAgent = {
  id: "appointment-booking",
  name: "Appointment booking",
  description:
    "Outbound: offers an appointment, asks which day and time suit the caller, books it by calling your booking system's HTTP endpoint (the book_appointment tool) and confirms it.",
  direction: "outbound",
  definition: {
    nodes: [
      {
        id: "start",
        type: "startCall",
        data: {
          greeting: "Hi {{first_name}}, this is the booking assistant at {{business_name}}. Would you like to schedule {{service}}?",
          prompt: `You are the booking assistant of {{business_name}}. ${BOOK.open} {{service}} for {{first_name}}. Keep replies short and friendly.`,
        },
      },
      {
        id: "book",
        type: "agentNode",
        data: {
          prompt: `${BOOK.ask}: ask which weekday and time suit {{first_name}} (we are open {{opening_hours}}), then call book_appointment with them. Tell them what it answered; if it failed, offer another time.`,
          extraction_variables: [
            { name: "appointment_day", type: "string", prompt: "The day they chose" },
            { name: "appointment_time", type: "string", prompt: "The time they chose" },
          ],
        },
      },
      { id: "booked", type: "endCall", data: { prompt: `${BOOK.done}: repeat the day and time, thank {{first_name}} and say goodbye.` } },
      { id: "declined", type: "endCall", data: { prompt: `${BOOK.declined}: tell {{first_name}} they can call {{business_name}} any time, and say goodbye.` } },
    ],
    edges: [
      edge("e1", "start", "book", "wants_appointment", "They want to book an appointment"),
      edge("e2", "start", "declined", "no_appointment", "They do not want an appointment"),
      edge("e3", "book", "booked", "booked", "book_appointment has answered and you told them the result"),
    ],
    tools: [
      {
        name: "book_appointment",
        description: "Books the appointment in the booking system once the caller has chosen a day and a time",
        parameters: {
          type: "object",
          properties: {
            name: { type: "string", description: "The caller's first name" },
            day: { type: "string", description: "The weekday, e.g. Tuesday" },
            time: { type: "string", description: "The time, e.g. 10 am" },
          },
          required: ["day", "time"],
        },
        url: "https://example.com/edgedial/book-appointment",
        method: "POST",
        timeout_ms: 4000,
        nodes: ["book"],
      },
    ],
  },
  variables: { first_name: "Jordan", business_name: "Riverside Physio", service: "a physiotherapy session", opening_hours: "weekdays from 9 am to 5 pm" },
  dispositions: ["booked", "declined"],
  script: [
    { prompt: BOOK.open, after: "caller", user: "no thank", call: { name: "no_appointment" } },
    { prompt: BOOK.open, after: "caller", user: "not interested", call: { name: "no_appointment" } },
    { prompt: BOOK.open, after: "caller", say: "Great. Which day and time would suit you?", call: { name: "wants_appointment" } },
    // A day heard: book it; after the tool's answer, confirm and move on (the step with the tool call is skipped
    // right after its own result).
    ...DAYS.flatMap((day): StarterScriptStep[] => [
      { prompt: BOOK.ask, user: day, call: { name: "book_appointment", arguments: { name: "Jordan", day, time: "10 am" } } },
      {
        prompt: BOOK.ask,
        after: "agent",
        user: day,
        say: `I've sent your booking for ${day} at 10 am.`,
        call: { name: "booked", arguments: { appointment_day: day, appointment_time: "10 am" } },
      },
    ]),
    { prompt: BOOK.ask, after: "agent" },
    { prompt: BOOK.ask, after: "caller", say: "Which weekday would suit you? For example, Tuesday at 10 am." },
    { prompt: BOOK.done, say: "You're all set. Thank you, and goodbye!", call: { name: "end_call", arguments: { disposition: "booked" } } },
    {
      prompt: BOOK.declined,
      say: "No problem. You can call us any time. Goodbye!",
      call: { name: "end_call", arguments: { disposition: "declined" } },
    },
  ],
  sample: ["Yes please.", "Tuesday morning works for me."],
  change: [
    {
      path: "tools[book_appointment].url",
      description:
        "Your booking system's endpoint: https://example.com/... is a placeholder. It receives the arguments as a JSON POST body; what it answers is read to the model",
    },
  ],
};

// ---- Inbound receptionist ------------------------------------------------------------------------------------------

const DESK = { open: "You are the receptionist", info: "Answer their question about", message: "Take a message", bye: "Thank them for calling" };

const receptionist: StarterAgent = {
  id: "inbound-receptionist",
  name: "Inbound receptionist",
  description:
    "Inbound (attach it to a phone number): answers with the business's name, gives the opening hours and address, takes a message, or puts the caller through to the front desk with a cold transfer (a message is taken when nobody answers).",
  direction: "inbound",
  definition: {
    nodes: [
      {
        id: "start",
        type: "startCall",
        data: {
          greeting: "Thank you for calling {{business_name}}. How can I help you today?",
          prompt: `${DESK.open} of {{business_name}}. Find out whether the caller wants our opening hours or address, to leave a message, or to speak with someone at the front desk. Be warm and brief.`,
        },
      },
      {
        id: "info",
        type: "agentNode",
        data: {
          prompt: `${DESK.info} {{business_name}}: we are open {{opening_hours}} and we are at {{address}}. Then ask whether there is anything else.`,
        },
      },
      {
        id: "message",
        type: "agentNode",
        data: {
          prompt: `${DESK.message}: ask for the caller's name and what the message is about, and read it back to them.`,
          extraction_variables: [
            { name: "caller_name", type: "string", prompt: "The caller's name", sensitive: true },
            { name: "message", type: "string", prompt: "The message, in one sentence" },
          ],
        },
      },
      {
        id: "front_desk",
        type: "transferCall",
        data: { destination: "+14155550123", mode: "cold", message: "One moment, I'll put you through to the front desk.", timeout_seconds: 25 },
      },
      { id: "goodbye", type: "endCall", data: { prompt: `${DESK.bye} {{business_name}} and say goodbye.` } },
    ],
    edges: [
      edge("e1", "start", "info", "hours_or_address", "They ask about opening hours or where we are"),
      edge("e2", "start", "message", "leave_message", "They want to leave a message or be called back"),
      edge("e3", "start", "front_desk", "front_desk", "They want to speak with a person"),
      edge("e4", "info", "message", "leave_message", "They want to leave a message"),
      edge("e5", "info", "goodbye", "done", "They need nothing else"),
      edge("e6", "message", "goodbye", "message_taken", "You have their name and message and read it back"),
      edge("e7", "front_desk", "message", "nobody_free", "Nobody at the front desk answered", "no_answer"),
    ],
  },
  variables: { business_name: "Bright Smile Dental", opening_hours: "Monday to Friday, 8 am to 6 pm", address: "12 Harbour Street" },
  dispositions: [],
  script: [
    {
      prompt: DESK.open,
      after: "caller",
      user: "open",
      say: "We're open Monday to Friday, 8 am to 6 pm, at 12 Harbour Street. Is there anything else?",
      call: { name: "hours_or_address" },
    },
    {
      prompt: DESK.open,
      after: "caller",
      user: "where",
      say: "We're at 12 Harbour Street, open Monday to Friday, 8 am to 6 pm. Is there anything else?",
      call: { name: "hours_or_address" },
    },
    { prompt: DESK.open, after: "caller", user: "message", say: "Of course. What's your name, and what is it about?", call: { name: "leave_message" } },
    { prompt: DESK.open, after: "caller", user: "speak", call: { name: "front_desk" } },
    { prompt: DESK.open, after: "caller", user: "someone", call: { name: "front_desk" } },
    {
      prompt: DESK.open,
      after: "caller",
      say: "I can tell you our opening hours, take a message, or put you through to the front desk. Which would you like?",
    },
    { prompt: DESK.info, after: "caller", user: "message", say: "Of course. What's your name, and what is it about?", call: { name: "leave_message" } },
    { prompt: DESK.info, after: "caller", call: { name: "done" } },
    { prompt: DESK.info, after: "agent" },
    // Here after the front desk did not answer: offer a message (arriving any other way, it was asked for already).
    { prompt: DESK.message, after: "agent", user: "speak", say: "Can I take a message instead? What's your name, and what is it about?" },
    { prompt: DESK.message, after: "agent", user: "someone", say: "Can I take a message instead? What's your name, and what is it about?" },
    { prompt: DESK.message, after: "agent" },
    {
      prompt: DESK.message,
      after: "caller",
      user: "maria",
      say: "Thank you, Maria. I'll ask Dr Lee to call you back about your appointment.",
      call: { name: "message_taken", arguments: { caller_name: "Maria", message: "Please ask Dr Lee to call back about the appointment" } },
    },
    { prompt: DESK.message, after: "caller", say: "Thank you, I've passed your message on.", call: { name: "message_taken" } },
    { prompt: DESK.bye, say: "Thank you for calling Bright Smile Dental. Goodbye!", call: { name: "end_call" } },
  ],
  sample: ["When are you open?", "Can I leave a message?", "This is Maria, please ask Dr Lee to call me back about my appointment."],
  change: [
    { path: "nodes[front_desk].data.destination", description: "Your front desk's phone number (E.164): +14155550123 is a placeholder that reaches nobody" },
  ],
};

export const STARTER_AGENTS: readonly StarterAgent[] = [lead, booking, receptionist];
