"""Function schemas for the Lakeshore Community College registration-desk assistant."""

from pipecat.adapters.schemas.function_schema import FunctionSchema
from pipecat.adapters.schemas.tools_schema import ToolsSchema

end_session_function = FunctionSchema(
    name="end_session",
    description="Close the call once the caller says goodbye or has nothing else to ask.",
    properties={},
    required=[],
)

enroll_in_course_function = FunctionSchema(
    name="enroll_in_course",
    description="Enroll a student in one Summer Term course or workshop, identified by its 4-digit course ID. Returns a confirmation number, or an error such as COURSE_FULL.",
    properties={
        "student_name": {
            "type": "string",
            "description": "The student's full name, exactly as the caller gave it.",
        },
        "course_id": {
            "type": "string",
            "description": "The 4-digit course or workshop ID from the catalog, e.g. 4101.",
        },
    },
    required=["student_name", "course_id"],
)

join_waitlist_function = FunctionSchema(
    name="join_waitlist",
    description="Put a student on the waitlist of a full course or workshop. Returns the student's waitlist position.",
    properties={
        "student_name": {
            "type": "string",
            "description": "The student's full name, exactly as the caller gave it.",
        },
        "course_id": {
            "type": "string",
            "description": "The 4-digit ID of the full course or workshop.",
        },
    },
    required=["student_name", "course_id"],
)

check_time_conflict_function = FunctionSchema(
    name="check_time_conflict",
    description="Check whether two courses or workshops meet at overlapping times. Returns conflict true or false with a reason.",
    properties={
        "course_id_1": {
            "type": "string",
            "description": "The 4-digit ID of the first course.",
        },
        "course_id_2": {
            "type": "string",
            "description": "The 4-digit ID of the second course.",
        },
    },
    required=["course_id_1", "course_id_2"],
)

cancel_action_function = FunctionSchema(
    name="cancel_action",
    description="Undo something done earlier for a student: drop an enrollment, leave a waitlist, cancel a parking permit, withdraw an accessibility request, or retract feedback.",
    properties={
        "action_type": {
            "type": "string",
            "description": "What to cancel: one of enrollment, waitlist, parking, accessibility_request, feedback.",
        },
        "student_name": {
            "type": "string",
            "description": "The student's full name, exactly as used when the action was made.",
        },
        "details": {
            "type": "string",
            "description": "Which item to cancel: the course ID for an enrollment or waitlist, the lot and days for a parking permit, or the request description.",
        },
    },
    required=["action_type", "student_name"],
)

request_accessibility_support_function = FunctionSchema(
    name="request_accessibility_support",
    description="Send an accessibility request to the Accessibility Services office, which calls the student to confirm.",
    properties={
        "student_name": {
            "type": "string",
            "description": "The student's full name, exactly as the caller gave it.",
        },
        "need_description": {
            "type": "string",
            "description": "What support is needed and for which course, in a short sentence.",
        },
    },
    required=["student_name", "need_description"],
)

reserve_parking_function = FunctionSchema(
    name="reserve_parking",
    description="Reserve a Summer Term parking permit in one lot for chosen weekdays for the whole term.",
    properties={
        "student_name": {
            "type": "string",
            "description": "The student's full name, exactly as the caller gave it.",
        },
        "lot": {
            "type": "string",
            "description": "The lot name as written in the knowledge base: North Lot, Lakeview Lot, Marsh Lot, or Birchwood Garage.",
        },
        "days": {
            "type": "string",
            "description": "The weekdays the permit covers, comma-separated, e.g. Tuesday, Thursday.",
        },
    },
    required=["student_name", "lot", "days"],
)

submit_course_feedback_function = FunctionSchema(
    name="submit_course_feedback",
    description="Pass a student's comment about a course on to the Continuing Education Office.",
    properties={
        "student_name": {
            "type": "string",
            "description": "The student's full name, exactly as the caller gave it.",
        },
        "course_id": {
            "type": "string",
            "description": "The 4-digit ID of the course the feedback is about.",
        },
        "feedback_text": {
            "type": "string",
            "description": "The feedback in the caller's own words, lightly tidied.",
        },
    },
    required=["student_name", "course_id", "feedback_text"],
)

ToolsSchemaForTest = ToolsSchema(
    standard_tools=[
        end_session_function,
        enroll_in_course_function,
        join_waitlist_function,
        check_time_conflict_function,
        cancel_action_function,
        request_accessibility_support_function,
        reserve_parking_function,
        submit_course_feedback_function,
    ]
)
